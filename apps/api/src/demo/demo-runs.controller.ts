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
  start(@Body() body: CreateDemoRunDto) {
    return this.demos.start(body);
  }

  /** The latest runs, newest first. */
  @Get()
  list() {
    return this.demos.list();
  }

  @Get(':id')
  get(@Param('id') id: string) {
    return this.demos.get(id);
  }
}
