/** Public statistics and the usage report: pure windows, ranking, shapes and use-cases. */
export * from "./periods";
export * from "./rank";
export * from "./shapes";
export * from "./ports";
export * from "./query";
export * from "./service";
export * from "./report";
export * from "./rollup-state";
export * from "./noise";
