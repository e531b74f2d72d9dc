import { Command, Option } from 'commander';
import {
  ConfigError,
  configMarkdownTable,
  loadConfig,
  loadDotEnv,
  operatorDirectory,
  unknownVariableWarnings,
  type Config,
} from '../config/config.js';
import { adminCommands } from './admin.commands.js';
import { CliError } from './open.js';
import { listenCommand } from './listen.js';

/**
 * `parley …`: one entry point for the server, the operator commands and the tooling.
 * Only what every command needs is imported here; each command imports its own code when it
 * runs (a CLI command answers in well under a second, issue #13).
 */

// `parley admin user list | head`: a reader that stops early is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

const operatorDir = operatorDirectory(process.env);
if (operatorDir !== undefined) process.chdir(operatorDir);

let warned = false;
function config(): Config {
  loadDotEnv();
  const cfg = loadConfig(process.env);
  // Issue 28: a mistyped name is said once, on stderr (stdout stays for results).
  if (!warned)
    for (const w of unknownVariableWarnings(process.env))
      process.stderr.write(`parley: warning: ${w}\n`);
  warned = true;
  return cfg;
}

const program = new Command('parley')
  .description('Parley chat platform server')
  .option('--data-dir <dir>', 'data directory (instead of PARLEY_DATA_DIR, default ./data)')
  .showHelpAfterError()
  .hook('preAction', (cmd) => {
    const dir = cmd.opts<{ dataDir?: string }>().dataDir;
    if (dir !== undefined) process.env['PARLEY_DATA_DIR'] = dir;
  });

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
  .description('create sample data (creates the database if there is none)')
  .addOption(
    new Option(
      '--demo',
      'a demo guild with channels, two people, one bot and an invite (once: a second run says it is there)',
    ).makeOptionMandatory(),
  )
  .action(async () => {
    const { seedDemo } = await import('./seed.js');
    await seedDemo(config());
  });

program
  .command('config')
  .description('print the settings in effect (secrets masked)')
  .option('--markdown', 'the documentation table of every variable (README)')
  .option('--json', 'as JSON: {name: {value, from}} (secrets masked)')
  .action(async (opts: { markdown?: boolean; json?: boolean }) => {
    if (opts.markdown) process.stdout.write(configMarkdownTable() + '\n');
    else {
      const { printConfig } = await import('./config.command.js');
      printConfig(config(), process.env, opts.json === true);
    }
  });

const migrateCmd = program
  .command('migrate')
  .description("the database's schema: status, and running an upgrade's migrations");
migrateCmd
  .command('status', { isDefault: true })
  .description('the schema version of the database and of this release; what is pending')
  .option('--json', 'as JSON')
  .action(async (opts: { json?: boolean }) => {
    const { migrateStatus } = await import('./migrate.js');
    await migrateStatus(config(), opts.json === true);
  });
migrateCmd
  .command('up')
  .description('run the pending migrations (back up first; the server must be stopped)')
  .option('--dry-run', 'list what would run, change nothing')
  .action(async (opts: { dryRun?: boolean }) => {
    const { migrateUp } = await import('./migrate.js');
    await migrateUp(config(), opts.dryRun === true);
  });

program
  .command('backup <file>')
  .description('write a consistent copy of the SQLite database, also while the server runs')
  .action(async (file: string) => {
    const { backup } = await import('./backup.js');
    await backup(config(), file);
  });

program
  .command('restore <file>')
  .description('replace the SQLite database with a backup (refused while a server uses it)')
  .action(async (file: string) => {
    const { restore } = await import('./backup.js');
    await restore(config(), file);
  });

program
  .command('openapi')
  .description('write the OpenAPI document')
  .requiredOption('--out <file>', 'where to write it')
  .action(async (opts: { out: string }) => {
    const [{ writeFileSync }, { generateOpenApi }] = await Promise.all([
      import('node:fs'),
      import('./openapi.js'),
    ]);
    writeFileSync(opts.out, (await generateOpenApi()) + '\n');
  });

// Bad configuration or input stops with one clear line (D42), never a stack trace.
program.parseAsync(process.argv).catch((err: unknown) => {
  const e = err as { name?: string; code?: string; message?: string };
  if (err instanceof ConfigError)
    process.stderr.write(`parley: bad configuration: ${err.message}\n`);
  else if (err instanceof CliError)
    process.stderr.write(`parley: ${err.code ? `${err.code}: ` : ''}${err.message}\n`);
  else if (e?.name === 'AppError') process.stderr.write(`parley: ${e.code}: ${e.message}\n`);
  else process.stderr.write(`parley: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
