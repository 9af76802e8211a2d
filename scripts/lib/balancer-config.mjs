/** deploy/haproxy.cfg for machines named by address (the rehearsal's), rather than found in Docker's DNS. */

/**
 * deploy/haproxy.cfg as it is, but for how it finds the replicas: compose names them in Docker's DNS,
 * here each API machine is a `server` line of its own (`host:port`), with the same health check.
 * @param {string} text deploy/haproxy.cfg
 * @param {string[]} apiAddresses `host:port` of each API process
 */
export function renderBalancerConfig(text, apiAddresses) {
  const withoutResolvers = text.replace(/^resolvers docker\n(?:[ \t]+.*\n|[ \t]*#.*\n)*/m, '');
  const template = /^([ \t]+)server-template .*$/m;
  const match = withoutResolvers.match(template);
  if (!match || withoutResolvers === text) {
    throw new Error('deploy/haproxy.cfg no longer has the resolvers section and server-template line this renders');
  }
  // The template's own options (health check and its timings) but those that name Docker's resolver.
  const options = [];
  const [, , , , ...templateOptions] = match[0].trim().split(/\s+/);
  for (let i = 0; i < templateOptions.length; i++) {
    if (['resolvers', 'resolve-prefer', 'init-addr'].includes(templateOptions[i])) i += 1;
    else options.push(templateOptions[i]);
  }
  const servers = apiAddresses
    .map((address, index) => `${match[1]}server api-${index + 1} ${address} ${options.join(' ')}`)
    .join('\n');
  return withoutResolvers.replace(template, servers);
}
