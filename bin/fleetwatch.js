#!/usr/bin/env node
import '../dist/bin/fleetwatch.js';
