import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderBalancerConfig } from '../../scripts/lib/balancer-config.mjs';

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
        execFileSync('haproxy', ['-c', '-q', '-f', join(dir, 'haproxy.cfg')], { stdio: 'pipe' }),
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
});
