export * from './errors.js';
export * from './ids.js';
export * from './rest.js';
export * from './permissions.js';
export * from './events.js';
export * from './gateway.js';
export * from './admin.js';
export * from './text.js';
