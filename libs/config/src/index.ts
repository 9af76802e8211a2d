export * from './app-config';
export * from './config.module';
export { DEVELOPMENT_SECRETS } from './secrets';
export * from './metrics-access';
