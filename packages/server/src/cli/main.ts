import { writeFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import {
  ConfigError,
  configMarkdownTable,
  loadConfig,
  loadDotEnv,
  operatorDirectory,
  type Config,
} from '../config/config.js';
import { AppError } from '../errors/app-error.js';
import { adminCommands } from './admin.commands.js';
import { seedDemo } from './seed.js';
import { generateOpenApi } from './openapi.js';
import { listenCommand } from './listen.js';

/** `parley …`: one entry point for the server, the operator commands and the tooling. */

const operatorDir = operatorDirectory(process.env);
if (operatorDir !== undefined) process.chdir(operatorDir);

function config(): Config {
  loadDotEnv();
  return loadConfig(process.env);
}

const program = new Command('parley')
  .description('Parley chat platform server')
  .showHelpAfterError();

program
  .command('serve', { isDefault: true })
  .description('run the server (HTTP API, gateway, CDN)')
  .action(async () => {
    const { serve } = await import('../main.js');
    await serve(config());
  });

program.addCommand(adminCommands(config));
program.addCommand(listenCommand());

program
  .command('seed')
  .description('create sample data')
  .addOption(
    new Option(
      '--demo',
      'a demo guild with channels, two people, one bot and an invite (once: a second run says it is there)',
    ).makeOptionMandatory(),
  )
  .action(async () => {
    await seedDemo(config());
  });

program
  .command('config')
  .description('print the configuration variables')
  .option('--markdown', 'as the README table')
  .action(() => {
    process.stdout.write(configMarkdownTable() + '\n');
  });

program
  .command('openapi')
  .description('write the OpenAPI document')
  .requiredOption('--out <file>', 'where to write it')
  .action(async (opts: { out: string }) => {
    writeFileSync(opts.out, (await generateOpenApi()) + '\n');
  });

// Bad configuration or input stops with one clear line (D42), never a stack trace.
program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof ConfigError)
    process.stderr.write(`parley: bad configuration: ${err.message}\n`);
  else if (err instanceof AppError) process.stderr.write(`parley: ${err.code}: ${err.message}\n`);
  else process.stderr.write(`parley: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
