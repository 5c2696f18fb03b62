export { CheckSchema, ChecksFileSchema, type Check } from './schema';
export { checksVerdict, runChecks, referencePath, type CheckContext, type CheckResult } from './run';
export { readCell, fileText, type CellReading } from './read';
