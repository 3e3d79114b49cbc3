/** Exit statuses of every command; scripts branch on them, so they never change meaning. */
export const ExitCode = {
  ok: 0,
  /** The upstream refused or failed the operation (other than the reasons below): try again later. */
  failed: 1,
  /**
   * Bad command line or configuration: also a request body that does not match the operation's
   * schema (nothing sent), one the robot refused as invalid (422), and a destructive command
   * that was not confirmed.
   */
  usage: 2,
  /** The token issuer rejected the credentials, or the API rejected the token. */
  auth: 3,
  /**
   * The vehicle or robot does not exist, is not granted to this client, or cannot do this; or no
   * such dead letter, receiver or silence.
   */
  notFound: 4,
  /** `--wait` gave up before the vehicle reported the requested state. */
  timedOut: 5,
  /**
   * The upstream answered 403: this client's token does not grant this operation on this vehicle
   * or robot (or, for a teleoperation lease, another user holds it). Asking again will not help.
   */
  forbidden: 6,
  /**
   * Stopped by SIGINT or SIGTERM in the middle of an operation. The long-running commands (`run`,
   * `simulate`, `demo`, `events tail`) run until then, and exit 0.
   */
  interrupted: 130,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
