// Every route the app registers, collected as Fastify registers it (an onRoute hook on each
// instance), so a test that walks "every route" covers a route added later without anyone
// listing it. A test file uses it as:
//
//   const { routes, fastifyWithRouteLog } = await vi.hoisted(() => import('../helpers/route-log.js'));
//   vi.mock('fastify', fastifyWithRouteLog);

/** Each route of every Fastify instance made since the test file started. */
export const routes: { method: string; url: string }[] = [];

/** A `vi.mock('fastify', …)` factory: the real module, whose instances log their routes. */
export async function fastifyWithRouteLog(importOriginal: <T>() => Promise<T>) {
  const actual = await importOriginal<typeof import('fastify')>();
  const wrapped = ((options?: object) => {
    const app = actual.default(options);
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) routes.push({ method, url: route.url });
    });
    return app;
  }) as unknown as typeof actual.default;
  return { ...actual, default: wrapped, fastify: wrapped };
}
