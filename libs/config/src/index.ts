export * from './app-config';
