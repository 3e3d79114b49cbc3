import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { renderTable, writeJson, writeLine } from '../io.js';

export function registerVehiclesCommand(program: Command, context: CliContext): void {
  program
    .command('vehicles')
    .description('list the vehicles this client may access, with VPN status and address')
    .option('--json', 'print the list as JSON')
    .action(async (options: { json?: boolean }) => {
      const vehicles = await context.upstream().fleet.listVehicles({ signal: context.io.signal });
      const { stdout } = context.io;
      if (options.json) return writeJson(stdout, vehicles);
      if (vehicles.length === 0) return writeLine(stdout, 'no vehicles are granted to this client');
      const connected = vehicles.filter((vehicle) => vehicle.vpnConnected).length;
      writeLine(
        stdout,
        renderTable(
          ['VEHICLE', 'VPN', 'IP ADDRESS'],
          vehicles.map((vehicle) => [
            vehicle.id,
            vehicle.vpnConnected ? 'connected' : 'disconnected',
            vehicle.ipAddress ?? '-',
          ]),
        ),
      );
      writeLine(stdout, `\n${vehicles.length} vehicles, ${connected} connected to the VPN`);
    });
}
