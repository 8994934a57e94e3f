export * from './meta.js';
export * from './gateway-api.js';
export * from './core.js';
export * from './turnpike.js';
export * from './kinds.js';
export * from './xds-ir.js';
export * from './image-reference.js';
export * from './proxy-ports.js';
