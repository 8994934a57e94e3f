// Jest runs the TypeScript sources directly (ESM, transformed by swc); `tsc -b` is the type gate.
const swc = ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'es6' } }];

const project = (name, dir = `packages/${name}`) => ({
  displayName: name,
  rootDir: `<rootDir>/${dir}`,
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^@turnpike/([^/]+)$': `<rootDir>/${dir
      .split('/')
      .map(() => '..')
      .join('/')}/packages/$1/src/index.ts`,
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: { '^.+\\.ts$': swc },
});

const unit = ['api', 'translator', 'engine', 'xds', 'kube', 'plugins', 'cli'].map((p) => project(p));
const e2e = [project('e2e', 'e2e')];

export default {
  projects: process.env.TURNPIKE_E2E === 'only' ? e2e : process.env.TURNPIKE_E2E ? [...unit, ...e2e] : unit,
  reporters: ['default'],
};
