// PID 1's journal entries about a service, in the shape systemd writes them (checked against
// systemd's src/core/job.c job_emit_start_message()/job_emit_done_message(), src/core/unit.c
// unit_log_process_exit()/unit_log_failure()/unit_log_success()/unit_check_oom() and the message
// ids of src/systemd/sd-messages.h): `_PID=1`, `_SYSTEMD_UNIT=init.scope`, no
// `_SYSTEMD_INVOCATION_ID` of their own, `_TRANSPORT=journal`, and `UNIT=` plus `INVOCATION_ID=`
// naming the service and the invocation the entry is about. Messages from log_unit_*() start with
// "UNIT: "; job messages name the unit with its description ("Started vllm.service - vLLM server.",
// systemd 249 and later).
import type { JournalEntry } from '../support/journal.js';

/** systemd's message ids (sd-messages.h). */
export const messageIds = {
  starting: '7d4958e842da4a758f6c1cdc7b36dcc5',
  started: '39f53479d3a045ac8e11786248231fbf',
  stopping: 'de5b426a63be47a7b6ac3eaac82e2f6f',
  stopped: '9d1aaa27d60140bd96365438aad20286',
  processExit: '98e322203f7a4ed290d09fe03c09fe15',
  failureResult: 'd9b373ed55a64feb8242e02dbe79a49c',
  success: '7ad2d189f7e94e70a38c781354912448',
  outOfMemory: 'fe6faa94e7774663a0da52717891d8ef',
  resources: 'ae8f7b866b0347b9af31fe1c80b127c0',
  restartScheduled: '5eb03494b6584870a536b337290809b3',
} as const;

const unitName = 'vllm.service';
const ident = `${unitName} - vLLM server`;

function pid1(at: number, invocation: string, message: string, priority: number, fields: Record<string, string>): JournalEntry {
  return {
    at,
    message,
    unit: 'init.scope',
    pid: 1,
    identifier: 'systemd',
    invocation: null,
    transport: 'journal',
    priority,
    extra: {
      _COMM: 'systemd',
      _EXE: '/usr/lib/systemd/systemd',
      _UID: '0',
      _GID: '0',
      _SYSTEMD_CGROUP: '/init.scope',
      _SYSTEMD_SLICE: '-.slice',
      SYSLOG_FACILITY: '3',
      UNIT: unitName,
      INVOCATION_ID: invocation,
      ...fields,
    },
  };
}

/** "Starting vllm.service - vLLM server..." (the start job began; its invocation is the new one). */
export const starting = (at: number, inv: string, job = 1234): JournalEntry =>
  pid1(at, inv, `Starting ${ident}...`, 6, { MESSAGE_ID: messageIds.starting, JOB_ID: String(job), JOB_TYPE: 'start', CODE_FILE: 'src/core/job.c', CODE_FUNC: 'job_emit_start_message' });

/** "Started vllm.service - vLLM server." (Type=simple: as soon as the main process was forked). */
export const started = (at: number, inv: string, job = 1234): JournalEntry =>
  pid1(at, inv, `Started ${ident}.`, 6, { MESSAGE_ID: messageIds.started, JOB_ID: String(job), JOB_TYPE: 'start', JOB_RESULT: 'done', CODE_FILE: 'src/core/job.c', CODE_FUNC: 'job_emit_done_message' });

/** "vllm.service: A process of this unit has been killed by the OOM killer." */
export const oomKilled = (at: number, inv: string): JournalEntry =>
  pid1(at, inv, `${unitName}: A process of this unit has been killed by the OOM killer.`, 4, { MESSAGE_ID: messageIds.outOfMemory, CODE_FILE: 'src/core/unit.c', CODE_FUNC: 'unit_check_oom' });

/** "vllm.service: Main process exited, code=killed, status=9/KILL" (or code=exited, status=1/FAILURE). */
export const mainExited = (at: number, inv: string, code: 'killed' | 'exited' | 'dumped', status: number, name: string): JournalEntry =>
  pid1(at, inv, `${unitName}: Main process exited, code=${code}, status=${status}/${name}`, code === 'exited' ? 5 : 4, {
    MESSAGE_ID: messageIds.processExit, EXIT_CODE: code, EXIT_STATUS: String(status), COMMAND: 'start', CODE_FILE: 'src/core/unit.c', CODE_FUNC: 'unit_log_process_exit',
  });

/** "vllm.service: Failed with result 'oom-kill'." */
export const failedWith = (at: number, inv: string, result: string): JournalEntry =>
  pid1(at, inv, `${unitName}: Failed with result '${result}'.`, 4, { MESSAGE_ID: messageIds.failureResult, UNIT_RESULT: result, CODE_FILE: 'src/core/unit.c', CODE_FUNC: 'unit_log_failure' });

/** "vllm.service: Consumed 1h 2min 3.456s CPU time." */
export const consumed = (at: number, inv: string, cpu: string): JournalEntry =>
  pid1(at, inv, `${unitName}: Consumed ${cpu} CPU time.`, 6, { MESSAGE_ID: messageIds.resources, CODE_FILE: 'src/core/unit.c', CODE_FUNC: 'unit_log_resources' });

/** "Stopping vllm.service - vLLM server..." (a `systemctl stop`). */
export const stopping = (at: number, inv: string, job = 1300): JournalEntry =>
  pid1(at, inv, `Stopping ${ident}...`, 6, { MESSAGE_ID: messageIds.stopping, JOB_ID: String(job), JOB_TYPE: 'stop', CODE_FILE: 'src/core/job.c', CODE_FUNC: 'job_emit_start_message' });

/** "vllm.service: Deactivated successfully." */
export const deactivated = (at: number, inv: string): JournalEntry =>
  pid1(at, inv, `${unitName}: Deactivated successfully.`, 6, { MESSAGE_ID: messageIds.success, CODE_FILE: 'src/core/unit.c', CODE_FUNC: 'unit_log_success' });

/** "Stopped vllm.service - vLLM server." */
export const stopped = (at: number, inv: string, job = 1300): JournalEntry =>
  pid1(at, inv, `Stopped ${ident}.`, 6, { MESSAGE_ID: messageIds.stopped, JOB_ID: String(job), JOB_TYPE: 'stop', JOB_RESULT: 'done', CODE_FILE: 'src/core/job.c', CODE_FUNC: 'job_emit_done_message' });

/** "vllm.service: Scheduled restart job, restart counter is at 1." (Restart=on-failure). */
export const restartScheduled = (at: number, inv: string, n: number): JournalEntry =>
  pid1(at, inv, `${unitName}: Scheduled restart job, restart counter is at ${n}.`, 6, { MESSAGE_ID: messageIds.restartScheduled, N_RESTARTS: String(n), CODE_FILE: 'src/core/service.c', CODE_FUNC: 'service_enter_restart' });
