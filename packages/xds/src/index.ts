export * from './resources.js';
export * from './type-urls.js';
export * from './proto-root.js';
export * from './validate.js';
export * from './snapshot-cache.js';
export * from './ads-server.js';
export * from './bootstrap.js';
export * from './xds-snapshots.js';
