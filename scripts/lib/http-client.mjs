/**
 * The API as an operator and a buyer use it from a script (the bench, the rehearsal): JSON over HTTP,
 * through its public routes only. Node built-ins only.
 */

/** Requests that must answer `expectStatus` (else they throw with the answer), JSON in and out. */
export function httpClient(baseUrl) {
  /** Any answer, as `{ status, text, body, headers }` (the body parsed when it is JSON). */
  async function answer(method, url, body, authorization) {
    const headers = body === undefined ? {} : { 'content-type': 'application/json' };
    if (authorization) headers.authorization = authorization;
    const response = await fetch(`${baseUrl}${url}`, { method, headers, body });
    const text = await response.text();
    let parsed = text || undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: kept as text
    }
    return { status: response.status, text, body: parsed, headers: response.headers };
  }
  async function raw(method, url, body, authorization, expectStatus) {
    const { status, text } = await answer(method, url, body, authorization);
    if (expectStatus && status !== expectStatus) {
      throw new Error(`${method} ${url} answered ${status}, expected ${expectStatus}: ${text}`);
    }
    return text ? JSON.parse(text) : undefined;
  }
  return {
    baseUrl,
    answer,
    raw,
    get: (url, token) => raw('GET', url, undefined, token && `Bearer ${token}`, 200),
    post: (url, body, token, expectStatus) =>
      raw('POST', url, JSON.stringify(body), token && `Bearer ${token}`, expectStatus),
  };
}
