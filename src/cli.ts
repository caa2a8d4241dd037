#!/usr/bin/env node
// The `modelwatch` executable: everything lives in commands/; this file only binds the process.
import { main } from './commands/main.js';

process.exitCode = await main(process.argv.slice(2), process);
