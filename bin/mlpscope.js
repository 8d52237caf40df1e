#!/usr/bin/env node
import '../js/cli.js';
