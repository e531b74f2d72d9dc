export declare const FIRST_SCREEN_BUDGET: number;
export declare function firstScreen(dir: string): { files: string[]; gzipBytes: number };
