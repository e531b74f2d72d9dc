import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateOpenApi } from '../../src/cli/openapi.js';
import { operationIdOf } from '../../src/http/openapi-refine.js';

// Issue 14: the OpenAPI document clients generate from. Checked on the generated document (which
// docs.test.ts holds equal to the committed docs/openapi.json).
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- walked generically

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const operations = (doc: Json): Array<[string, string, Json]> =>
  Object.entries<Json>({ ...doc.paths, ...doc.webhooks }).flatMap(([p, item]) =>
    METHODS.filter((m) => item[m]).map((m): [string, string, Json] => [m, p, item[m] as Json]),
  );

describe('OpenAPI document', () => {
  let doc: Json;
  let dir: string;
  let file: string;
  beforeAll(async () => {
    doc = JSON.parse(await generateOpenApi()) as Json;
    dir = mkdtempSync(path.join(tmpdir(), 'parley-openapi-'));
    file = path.join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
  }, 60_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is OpenAPI 3.1 with a license, described tags and the eight webhook events', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.license).toMatchObject({ name: 'MIT' });
    for (const t of doc.tags as Json[]) expect(t.description, t.name).toMatch(/\S/);
    expect(Object.keys(doc.webhooks as Json).sort()).toEqual(
      [
        'DM_MESSAGE_CREATE',
        'DM_MESSAGE_DELETE',
        'DM_MESSAGE_UPDATE',
        'GUILD_MEMBER_ADD',
        'GUILD_MEMBER_REMOVE',
        'MESSAGE_CREATE',
        'MESSAGE_DELETE',
        'MESSAGE_UPDATE',
      ].sort(),
    );
  });

  it('every operation has a unique operationId, derived from method and path', () => {
    const ids = operations(doc).map(([, , op]) => op.operationId as string);
    expect(ids.every((id) => typeof id === 'string' && /^[A-Za-z][A-Za-z0-9]*$/.test(id))).toBe(
      true,
    );
    expect(new Set(ids).size).toBe(ids.length);
    expect(operationIdOf('get', '/api/v1/channels/{channelId}/messages')).toBe(
      'apiGetChannelsMessages',
    );
    expect(operationIdOf('put', '/app/v1/users/@me/password')).toBe('appPutUsersMePassword');
    expect(operationIdOf('delete', '/admin/v1/guilds/{guildId}/members/{userId}')).toBe(
      'adminDeleteGuildsMembersByUserId',
    );
  });

  it('ids are integers (int64) in paths, queries and bodies alike, with the D4 rule', () => {
    expect(doc.components.schemas.Id).toMatchObject({
      type: 'integer',
      format: 'int64',
      minimum: 1,
    });
    expect(doc.components.schemas.Id.description).toMatch(/D4/);
    const text = JSON.stringify(doc);
    expect(text).not.toMatch(/parley-id|parley-cursor/);
    for (const [m, p, op] of operations(doc))
      for (const prm of (op.parameters as Json[] | undefined) ?? [])
        // Ids are the numeric `…Id` parameters and the cursors; session ids and invite codes are
        // opaque strings (D47, D49), not D4 ids.
        if (
          (prm.in === 'path' && /Id$/.test(prm.name as string)) ||
          ['before', 'after'].includes(prm.name as string)
        )
          expect(prm.schema.$ref, `${m} ${p} ${prm.name}`).toMatch(
            /#\/components\/schemas\/(Id|Cursor)$/,
          );
    // the Message component's id is the same Id
    expect(doc.components.schemas.Message.properties.id).toEqual({
      $ref: '#/components/schemas/Id',
    });
  });

  it('titled schemas are named components, referenced wherever they are used', () => {
    for (const name of [
      'Message',
      'Channel',
      'Member',
      'Bot',
      'MessageList',
      'UploadedFile',
      'ErrorBody',
    ])
      expect(doc.components.schemas[name], name).toBeDefined();
    const inline: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (node === null || typeof node !== 'object') return;
      const o = node as Json;
      if (typeof o.title === 'string' && where !== 'component') inline.push(o.title);
      for (const [k, v] of Object.entries(o))
        walk(v, k === 'schemas' ? 'schemas' : where === 'schemas' ? 'component' : k);
    };
    walk({ paths: doc.paths, webhooks: doc.webhooks }, 'doc');
    expect(inline).toEqual([]);
    const get = doc.paths['/api/v1/channels/{channelId}/messages'].get;
    expect(get.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/MessageList',
    });
  });

  it('each operation lists only the error statuses it can return', () => {
    const codes = (p: string, m: string) =>
      Object.keys(doc.paths[p][m].responses as Json).map(Number);
    expect(codes('/api/v1/bot/me', 'get')).toEqual([200, 401, 429, 500]);
    expect(codes('/api/v1/files/quota', 'get')).not.toContain(400);
    expect(codes('/api/v1/channels/{channelId}/messages', 'post')).toEqual(
      expect.arrayContaining([400, 401, 403, 404, 413, 415, 429]),
    );
    // the operator API is not rate limited (D26) and has no permission checks
    expect(codes('/admin/v1/users', 'post')).not.toContain(429);
    expect(codes('/admin/v1/users', 'post')).not.toContain(403);
    expect(codes('/admin/v1/bots', 'post')).toContain(409); // config.errors
  });

  it('documents the upload body and the response headers', () => {
    const up = doc.paths['/api/v1/files/upload'].post;
    expect(up.requestBody.content['multipart/form-data'].schema.required).toEqual(['file']);
    const ok = doc.paths['/api/v1/bot/me'].get.responses['200'].headers as Json;
    expect(Object.keys(ok)).toEqual(
      expect.arrayContaining([
        'X-Request-Id',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
      ]),
    );
    expect(doc.paths['/api/v1/bot/me'].get.responses['429'].headers['Retry-After']).toBeDefined();
    expect(
      doc.paths['/admin/v1/users'].post.responses['201'].headers['X-RateLimit-Limit'],
    ).toBeUndefined();
  });

  it('passes `redocly lint` (recommended-strict) with no error and no warning', async () => {
    const cli = path.join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');
    const run = await promisify(execFile)(
      process.execPath,
      [cli, 'lint', file, '--extends', 'recommended-strict', '--format', 'json'],
      {
        cwd: dir,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    ).catch((e: { stdout?: string; stderr?: string }) => e);
    const report = JSON.parse(run.stdout ?? '{}') as { totals?: Json; problems?: Json[] };
    expect(report.problems?.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);

  it('generates types with openapi-typescript that page history with `before: message.id`', async () => {
    writeFileSync(path.join(dir, 'api.d.ts'), astToString(await openapiTS(doc as never)));
    const snippet = `
import type { components, paths } from './api.js';
type Message = components['schemas']['Message'];
type History = paths['/api/v1/channels/{channelId}/messages']['get'];
declare const message: Message;
export const query: NonNullable<History['parameters']['query']> = { before: message.id, limit: 100 };
export const where: History['parameters']['path'] = { channelId: message.channelId };
// @ts-expect-error ids are numbers, not strings
export const wrong: NonNullable<History['parameters']['query']> = { before: String(message.id) };
`;
    writeFileSync(path.join(dir, 'snippet.ts'), snippet);
    const program = ts.createProgram([path.join(dir, 'snippet.ts')], {
      strict: true,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
      noEmit: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      skipLibCheck: false,
      types: [],
    });
    const errors = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(errors).toEqual([]);
  }, 60_000);
});
