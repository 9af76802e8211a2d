import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { renderBalancerConfig } from '../../scripts/lib/balancer-config.mjs';
import { freePort } from '../../scripts/lib/ports.mjs';
import { waitFor } from '../support/fixtures';
import { HAPROXY_PATH } from '../support/load-balancer';

const DEPLOYED = readFileSync(join(__dirname, '..', '..', 'deploy', 'haproxy.cfg'), 'utf8');

describe("the rehearsal's balancer: deploy/haproxy.cfg with its replicas named by address", () => {
  const rendered = renderBalancerConfig(DEPLOYED, ['10.213.0.11:3000', '10.213.0.12:3000']);

  it("names each API machine once, with the template's health check and timings, and no Docker resolver", () => {
    const servers = rendered.split('\n').filter((line) => /^\s+server /.test(line));
    expect(servers.map((line) => line.trim())).toEqual([
      'server api-1 10.213.0.11:3000 check inter 2s fall 2 rise 2',
      'server api-2 10.213.0.12:3000 check inter 2s fall 2 rise 2',
    ]);
    expect(rendered).not.toMatch(/^\s*server-template /m);
    expect(rendered).not.toMatch(/^resolvers /m);
    expect(rendered).not.toMatch(/^\s*nameserver /m);
  });

  it('keeps every other line of the deployed file, in order', () => {
    // The deployed file's lines but its resolver section (up to the next blank line) and the template.
    const expected: string[] = [];
    let inResolvers = false;
    for (const line of DEPLOYED.split('\n')) {
      if (line.startsWith('resolvers ')) inResolvers = true;
      else if (inResolvers && line.trim() === '') inResolvers = false;
      if (!inResolvers && !/^\s+server-template /.test(line)) expected.push(line);
    }
    expect(rendered.split('\n').filter((line) => !/^\s+server api-\d+ /.test(line))).toEqual(expected);
  });

  it('is a configuration HAProxy accepts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'balancer-config-'));
    try {
      writeFileSync(join(dir, 'haproxy.cfg'), rendered);
      expect(() =>
        execFileSync(HAPROXY_PATH, ['-c', '-q', '-f', join(dir, 'haproxy.cfg')], { stdio: 'pipe' }),
      ).not.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a deployed file it no longer knows how to render, rather than guessing', () => {
    expect(() => renderBalancerConfig(DEPLOYED.replace(/server-template/g, 'server'), ['10.0.0.1:3000'])).toThrow(
      /no longer has/,
    );
  });

  it("answers its own refusals in the API's error shape: 503 + retry-after with no replica to take a request, 502 when one hangs up", async () => {
    const port = await freePort();
    const nobody = await freePort();
    // A replica that takes the connection and hangs up without a word, as one killed mid-request does.
    const hangingUp: Server = createServer((socket) => socket.once('data', () => socket.destroy()));
    await new Promise<void>((resolve) => hangingUp.listen(0, '127.0.0.1', resolve));
    const hangUpPort = (hangingUp.address() as { port: number }).port;
    const dir = mkdtempSync(join(tmpdir(), 'balancer-errors-'));
    const balancer = (servers: string[]) => {
      const file = join(dir, `haproxy-${servers.join('-')}.cfg`);
      writeFileSync(
        file,
        renderBalancerConfig(DEPLOYED, servers)
          .replace(/^\s+bind :3000$/m, `    bind 127.0.0.1:${port}`)
          // No health check: the request itself meets the replica as it is.
          .replace(/ check inter \S+ fall \d+ rise \d+/g, ''),
      );
      return spawn(HAPROXY_PATH, ['-f', file, '-db'], { stdio: 'ignore' });
    };
    const ask = async () => {
      const answer = await request(`http://127.0.0.1:${port}/api/sales`);
      return {
        status: answer.statusCode,
        contentType: answer.headers['content-type'],
        retryAfter: answer.headers['retry-after'],
        body: (await answer.body.json()) as { error: { code: string; message: string } },
      };
    };
    try {
      for (const [servers, expected] of [
        [[`127.0.0.1:${nobody}`], { status: 503, retryAfter: '1' }],
        [[`127.0.0.1:${hangUpPort}`], { status: 502, retryAfter: undefined }],
      ] as const) {
        const child = balancer([...servers]);
        try {
          // Refused until HAProxy listens.
          const answer = (await waitFor(
            'the balancer to answer',
            () => ask().catch(() => undefined),
            (answered) => answered !== undefined,
            10_000,
          ))!;
          expect(answer).toMatchObject({ ...expected, contentType: 'application/json' });
          expect(answer.body.error.code).toBe('UNAVAILABLE');
          expect(answer.body.error.message.length).toBeGreaterThan(10);
        } finally {
          child.kill('SIGKILL');
          await new Promise((resolve) => child.once('exit', resolve));
        }
      }
    } finally {
      hangingUp.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
