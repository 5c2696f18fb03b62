/**
 * One jest run over core, plugins and examples. TypeScript is transformed by swc (fast; no
 * type checking — `npm run typecheck` does that before the tests). Workspace packages map to
 * their sources so tests never need a build, except the ones that exercise the built CLI.
 */
const swc = ['@swc/jest', {
  jsc: {
    target: 'es2022',
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: false },
  },
  module: { type: 'commonjs' },
}];

const { readdirSync } = require('node:fs');

// Map exactly the workspace plugins to their sources; any other @clawgym/* name must fail to
// resolve as it would for a user (resolution tests rely on that).
const workspacePlugins = readdirSync(`${__dirname}/plugins`).join('|');

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/core', '<rootDir>/plugins', '<rootDir>/examples', '<rootDir>/e2e'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  modulePathIgnorePatterns: ['<rootDir>/[^/]+/[^/]+/dist/', '<rootDir>/core/dist/'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    '^@clawgym/core$': '<rootDir>/core/src/index.ts',
    '^@clawgym/core/testing$': '<rootDir>/core/src/testing/index.ts',
    [`^@clawgym/(${workspacePlugins})$`]: '<rootDir>/plugins/$1/src/index.ts',
    [`^@clawgym/(${workspacePlugins})/testing$`]: '<rootDir>/plugins/$1/src/testing/index.ts',
  },
  testTimeout: 30000,
};
