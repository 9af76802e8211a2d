import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, vi } from 'vitest';
import { server } from './server';

// findBy* waits up to 1 s by default; the first render of a file (lazy routes, module loading) can take
// longer on a busy CI machine. A real failure still fails, only later.
configure({ asyncUtilTimeout: 4_000 });

// jsdom lays nothing out, so it cannot scroll: its window.scrollTo only reports "Not implemented". React
// Router's <ScrollRestoration> (components/Layout.tsx) calls it on every navigation; a no-op stands in.
// Only this one method: anything else jsdom lacks still says so.
vi.spyOn(window, 'scrollTo').mockImplementation(() => undefined);

// Every request a component makes is answered by the test's own handlers (msw); one nobody expected
// fails the test instead of silently hanging.
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  server.resetHandlers();
  cleanup();
  localStorage.clear();
  sessionStorage.clear();
});
afterAll(() => server.close());
