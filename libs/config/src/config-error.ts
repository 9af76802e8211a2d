/** A bad or missing environment value: the process stops at boot with this message, which names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
