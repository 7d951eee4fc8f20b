import type { ConfigurationOptions, ObservableMiddleware } from '@kubernetes/client-node';
import { kubeModule } from './client.js';

/** As sendJson's: long enough for a loaded API server, short enough that a dead one is noticed. */
export const REQUEST_TIME_LIMIT_MS = 30_000;

/**
 * Request options for client-node's typed calls, which have no time limit of their own: a
 * request the API server (or a proxy before it) accepts and never answers would hold its caller
 * forever, past any --wait-timeout. Added to `options`' own middleware.
 */
export async function timeLimited(ms: number, options?: ConfigurationOptions): Promise<ConfigurationOptions> {
  const { Observable } = await kubeModule();
  const limit: ObservableMiddleware = {
    pre: (context) => {
      context.setSignal(AbortSignal.timeout(ms));
      return new Observable(Promise.resolve(context));
    },
    post: (context) => new Observable(Promise.resolve(context)),
  };
  return { ...options, middleware: [...(options?.middleware ?? []), limit], middlewareMergeStrategy: 'append' };
}
