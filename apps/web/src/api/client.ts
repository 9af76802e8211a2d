import { ErrorCode } from '@flash-sale/contract';
import { ApiError } from './api-error';
import { serverClock } from './server-clock';

interface RequestOptions {
  method?: 'GET' | 'POST' | 'PATCH';
  body?: unknown;
  token?: string | null;
  signal?: AbortSignal;
}

/**
 * The one way the storefront talks to the API: same origin (the API serves the storefront; Vite's dev
 * server proxies /api), JSON in and out, and every non-2xx turned into an ApiError carrying the
 * contract's code. Each answer's Date header also tunes the server clock the countdowns use.
 */
export async function apiRequest<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const response = await send(path, options, 'application/json');
  const text = await response.text();
  const body: unknown = text ? safeJson(text) : undefined;
  if (!response.ok) throw toApiError(response, body);
  return body as T;
}

/** A non-JSON answer (the CSV export) as a Blob; errors are still the contract's JSON. */
export async function apiDownload(path: string, options: RequestOptions = {}): Promise<Blob> {
  const response = await send(path, options, 'text/csv, application/json');
  if (!response.ok) {
    const text = await response.text();
    throw toApiError(response, text ? safeJson(text) : undefined);
  }
  return response.blob();
}

async function send(path: string, options: RequestOptions, accept: string): Promise<Response> {
  const headers: Record<string, string> = { accept };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;

  let response: Response;
  const sentAt = Date.now();
  try {
    response = await fetch(`/api${path}`, {
      method: options.method ?? 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    });
  } catch (cause) {
    if (options.signal?.aborted) throw cause;
    throw ApiError.unreachable(cause);
  }
  serverClock.observe(response.headers.get('date'), sentAt, Date.now());
  return response;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined; // a proxy's HTML error page, say
  }
}

function toApiError(response: Response, body: unknown): ApiError {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  const retryAfter = Number(response.headers.get('retry-after'));
  if (error && typeof error.code === 'string') {
    return new ApiError(
      response.status,
      error.code,
      typeof error.message === 'string' ? error.message : error.code,
      Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
    );
  }
  // Not the API's error body: a gateway in between failed.
  const code = response.status >= 500 ? ErrorCode.Unavailable : ErrorCode.Internal;
  return new ApiError(response.status, code, `HTTP ${response.status}`);
}
