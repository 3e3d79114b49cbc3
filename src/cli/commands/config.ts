import type { Command } from 'commander';
import { stringify } from 'yaml';
import { configPath, maskConfig } from '../../config/index.js';
import type { CliContext } from '../context.js';
import { writeJson, writeLine } from '../io.js';

export function registerConfigCommand(
  program: Command,
  context: CliContext,
  globals: () => { config?: string },
) {
  const config = program.command('config').description('work with the configuration file');
  config
    .command('check')
    .description('validate the config and print it as it will be used, secrets masked')
    .option('--json', 'print the effective config as JSON')
    .option('-q, --quiet', 'print nothing when the config is valid')
    .action((options: { json?: boolean; quiet?: boolean }) => {
      const effective = maskConfig(context.config());
      const { stdout, stderr } = context.io;
      if (options.quiet) return;
      if (options.json) return writeJson(stdout, effective);
      writeLine(stderr, `${configPath(globals().config, context.io.env)}: valid`);
      stdout.write(stringify(effective));
    });
}
