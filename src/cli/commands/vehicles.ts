import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import { addListCommand } from '../read-command.js';

export function registerVehiclesCommand(program: Command, context: CliContext): void {
  addListCommand(program, context, {
    name: 'vehicles',
    noun: 'vehicle',
    description: 'list the vehicles this client may access, with VPN status and address',
    jsonHelp: 'print the list as JSON',
    list: (signal) => context.upstream().fleet.listVehicles({ signal }),
    view: {
      headers: ['VEHICLE', 'VPN', 'IP ADDRESS'],
      row: (vehicle) => [
        vehicle.id,
        vehicle.vpnConnected ? 'connected' : 'disconnected',
        vehicle.ipAddress ?? '-',
      ],
      empty: 'no vehicles are granted to this client',
      footer: (all) =>
        `${all.length} vehicles, ${all.filter((vehicle) => vehicle.vpnConnected).length} connected to the VPN`,
    },
  });
}
