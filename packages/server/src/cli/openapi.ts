import { loadConfig } from '../config/config.js';
import { buildApp } from '../http/app.js';
import { openServices } from '../services.js';

/**
 * The committed OpenAPI document (docs/openapi.json), generated with a fixed origin so it is
 * reproducible; a test regenerates it and fails when the committed copy is stale.
 */
export const OPENAPI_ORIGIN = 'http://127.0.0.1:8080';

export async function generateOpenApi(): Promise<string> {
  const config = loadConfig({
    PARLEY_DATABASE_URL: 'sqlite::memory:',
    PARLEY_PUBLIC_URL: OPENAPI_ORIGIN,
    PARLEY_ADMIN_TOKEN: 'x'.repeat(32),
  });
  const services = await openServices(config);
  try {
    const app = await buildApp(services);
    await app.ready();
    const doc = JSON.stringify(await app.openApiDocument(), null, 2);
    await app.close();
    return doc;
  } finally {
    await services.close();
  }
}
