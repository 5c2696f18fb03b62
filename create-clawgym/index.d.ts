/** The packages the made project lists, one version for all. */
export declare const PACKAGES: readonly string[];
/** Their version: this package's own (ClawGym's packages are released together). */
export declare const VERSION: string;
/** Write a ClawGym project into `folder` (relative to `cwd`); refused if the folder holds anything. */
export declare function createProject(folder: string, cwd?: string): { dir: string; name: string; files: string[] };
