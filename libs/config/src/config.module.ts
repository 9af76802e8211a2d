import { type DynamicModule, Global, Inject, Module } from '@nestjs/common';
import type { AppConfig } from './app-config';

/** The injection key of the validated AppConfig (it is an interface, so it has no class to inject by). */
export const APP_CONFIG = Symbol('APP_CONFIG');

/** Injects the AppConfig: `constructor(@InjectAppConfig() config: AppConfig)`. */
export const InjectAppConfig = (): ParameterDecorator => Inject(APP_CONFIG);

/** Makes the config loaded once at boot available to every module of an app. */
@Global()
@Module({})
export class AppConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppConfigModule,
      providers: [{ provide: APP_CONFIG, useValue: config }],
      exports: [APP_CONFIG],
    };
  }
}
