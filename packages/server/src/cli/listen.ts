import { randomUUID } from 'node:crypto';
import { Command, Option } from 'commander';
import type { EventEnvelope } from '@parley/protocol';
import { webhookBody } from '../events/serialize.js';
import { signatureHeaders } from '../webhooks/signing.js';

/**
 * `PARLEY_TOKEN=… PARLEY_WEBHOOK_SECRET=… parley listen --forward-to <url>` (or `--token`,
 * `--secret`, which warn: a command line is echoed and kept in history): holds the
 * bot's gateway session (D28–D33, through @parley/sdk's GatewayClient: resumes across drops) and
 * POSTs every event to a local URL exactly as webhook delivery would (D38): the same body bytes
 * (`{"type","data"}` made by the server's own serializer), `X-Service-Event`,
 * `X-Service-Signature` (HMAC-SHA256 with the given secret), `X-Service-Delivery`,
 * `X-Service-Attempt`, `X-Service-Timestamp` and `User-Agent: Parley-Webhooks/1`. One line per
 * event with the local answer's status. A webhook handler can so be tried without a public
 * address. Events are forwarded one at a time, once each (no retries: the line shows the
 * outcome). Ctrl-C ends the session with close 1000 (not resumable, D31).
 *
 * The secret is the bot's webhook secret (D38, D41: shown when the bot is created, by
 * `PUT /admin/v1/bots/:botId/webhook`, or rotated with `parley admin`); a bot token cannot read it.
 */
export function listenCommand(): Command {
  return new Command('listen')
    .description(
      "hold a bot's gateway session and forward each event to a local URL as a signed webhook delivery (D38)",
    )
    .addOption(
      // Issue 28: a token typed on the command line is echoed by `npm run` and kept in the
      // shell's history and `ps`; the environment is preferred.
      new Option('--token <token>', 'the bot token (D8); prefer PARLEY_TOKEN in the environment')
        .env('PARLEY_TOKEN')
        .makeOptionMandatory(),
    )
    .requiredOption(
      '--forward-to <url>',
      'where to POST each event, e.g. http://127.0.0.1:3000/hook',
    )
    .addOption(
      new Option(
        '--secret <secret>',
        "the bot's webhook secret, to sign with (D38); prefer PARLEY_WEBHOOK_SECRET",
      )
        .env('PARLEY_WEBHOOK_SECRET')
        .makeOptionMandatory(),
    )
    .option(
      '--server <origin>',
      'the Parley server (its public origin, D1)',
      'http://127.0.0.1:8080',
    )
    .action(
      async (
        opts: { token: string; forwardTo: string; secret: string; server: string },
        cmd: Command,
      ) => {
        for (const [option, variable] of [
          ['token', 'PARLEY_TOKEN'],
          ['secret', 'PARLEY_WEBHOOK_SECRET'],
        ] as const)
          if (cmd.getOptionValueSource(option) === 'cli')
            process.stderr.write(
              `parley: warning: --${option} on the command line is echoed by npm and kept in your shell history; set ${variable} in the environment instead\n`,
            );
        await listen(opts);
      },
    );
}

async function listen(opts: {
  token: string;
  forwardTo: string;
  secret: string;
  server: string;
}): Promise<void> {
  const target = new URL(opts.forwardTo); // a bad URL stops here with one line
  if (!/^https?:$/.test(target.protocol)) throw new Error('--forward-to must be an http(s) URL');
  const { GatewayClient } = await import('@parley/sdk');
  const out = (line: string): void => void process.stdout.write(line + '\n');
  const client = new GatewayClient({ token: opts.token, url: opts.server });

  // One delivery at a time, in the order the gateway gave them.
  let chain = Promise.resolve();
  client.on('event', (e) => {
    chain = chain.then(() => forward(e));
  });
  const forward = async (e: EventEnvelope): Promise<void> => {
    const body = webhookBody(e.type, JSON.stringify(e.data));
    const started = Date.now();
    try {
      const res = await fetch(target, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Parley-Webhooks/1',
          'x-service-event': e.type,
          'x-service-attempt': '1',
          ...signatureHeaders(opts.secret, body, randomUUID(), Math.floor(Date.now() / 1000)),
        },
        body,
        redirect: 'manual', // D39: redirects are not followed
        signal: AbortSignal.timeout(10_000), // D39: 10 s
      });
      await res.arrayBuffer();
      out(
        `${new Date().toISOString()}  ${e.type.padEnd(20)} → ${res.status} (${Date.now() - started} ms)`,
      );
    } catch (err) {
      const why = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
      out(`${new Date().toISOString()}  ${e.type.padEnd(20)} → failed: ${why}`);
    }
  };

  client.on('ready', (r) => {
    out(
      `parley listen: ${r.bot.name} (bot ${r.bot.id}), session ${r.sessionId}; forwarding events to ${target.href}`,
    );
  });
  client.on('resumed', () => out('parley listen: resumed, no event missed'));
  client.on('invalidSession', () =>
    out(
      'parley listen: the session could not be resumed; a new one starts (events in between may be missed)',
    ),
  );
  client.on('reconnecting', (i) =>
    out(
      `parley listen: connection lost (${i.reason}); reconnecting in ${(i.delayMs / 1000).toFixed(1)} s`,
    ),
  );

  const ended = new Promise<void>((resolve, reject) => {
    client.on('stopped', (err) => (err ? reject(err) : resolve()));
  });
  ended.catch(() => {}); // awaited below; connect() reports a refusal first
  // Ctrl-C: close 1000 ends the session (D31), then wait for the deliveries under way.
  const stop = (): void => {
    out('parley listen: closing the session');
    void client.close();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  await client.connect();
  await ended;
  await chain;
}
