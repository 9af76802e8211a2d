import type { DemoRunReport, DemoRunStarted } from '@flash-sale/contract';
import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { AdminOnly } from '../auth/auth.guard';
import { CreateDemoRunDto } from './demo-run.dto';
import { DemoRunsService } from './demo-runs.service';

@Controller('admin/demo-runs')
@AdminOnly()
export class DemoRunsController {
  constructor(private readonly demos: DemoRunsService) {}

  /** Starts the demonstration and answers at once; its progress is read with GET …/:id. */
  @Post()
  @HttpCode(HttpStatus.ACCEPTED)
  start(@Body() body: CreateDemoRunDto): Promise<DemoRunStarted> {
    return this.demos.start(body);
  }

  /** The latest runs, newest first. */
  @Get()
  list(): Promise<DemoRunReport[]> {
    return this.demos.list();
  }

  @Get(':id')
  get(@Param('id') id: string): Promise<DemoRunReport> {
    return this.demos.get(id);
  }
}
