export * from './dispatcher.js';
export * from './flusher.js';
export * from './group-record.js';
export * from './group-store.js';
export * from './keys.js';
export * from './mutes.js';
export * from './notification-step.js';
export * from './silence-store.js';
