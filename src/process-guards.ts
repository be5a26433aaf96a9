import type { Logger } from './logger.js';

/**
 * Process-level guards of `inbox serve`. A promise rejection that nothing handled is a bug,
 * but ending the process for it turns one bad row into a crash loop of every worker that
 * meets it (Node's default since v15). It is logged as an error, with its stack, and the
 * process keeps serving. Uncaught exceptions keep Node's default: after one the process's
 * state is unknown.
 */
export function installProcessGuards(log: Logger, target: NodeJS.Process = process): void {
  target.on('unhandledRejection', (reason) => {
    log.error({ err: reason }, 'unhandled promise rejection (a bug): logged, and the process keeps serving');
  });
}
