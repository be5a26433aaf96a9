// The launcher lives in harness/ so that scripts (scripts/console-perf.ts) use the same Chromium.
export * from '../../harness/browser.js';
