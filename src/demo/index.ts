export { DEMO_BEHAVIOURS, DEMO_CLIENT, type DemoConfigOptions, demoConfig } from './config.js';
export { type DemoOptions, runDemo } from './demo.js';
export {
  type DemoRedis,
  DemoRedisError,
  deletePrefixKeys,
  findRedis,
  LOCAL_REDIS_URL,
  NO_REDIS_MESSAGE,
  redisAnswers,
  startPrivateRedis,
} from './redis.js';
export { castDemo, type DemoCast, type DemoScriptOptions, runDemoScript } from './script.js';
