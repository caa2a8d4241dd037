/**
 * The group dashboard (dashboards/modelwatch-group.json): one model loaded across several nodes,
 * judged as one. At the top the group's recorded state (config/prometheus/modelwatch.rules.yml,
 * group modelwatch-groups): its phase (its least advanced node's), its progress (its slowest
 * node's), whether it is ready, the node that holds it back, the nodes that report and its
 * alerts; then one repeated row per node: its phase timeline, progress, whether it is stalled or
 * waits on another node, GPU memory and the last line it printed. `npm run dashboards` writes the
 * JSON; a test keeps the committed file equal to what this module generates.
 */
/* eslint-disable @typescript-eslint/no-deprecated --
 * The SDK marks the classic dashboard schema deprecated in favour of dashboardv2 (see load.ts). */
import {
  DashboardBuilder,
  DashboardCursorSync,
  DatasourceVariableBuilder,
  MappingType,
  QueryVariableBuilder,
  RowBuilder,
  VariableRefresh,
  VariableSort,
  type Dashboard,
  type ValueMapping,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { BigValueColorMode, BigValueGraphMode, BigValueTextMode } from '@grafana/grafana-foundation-sdk/common';
import { PromQueryFormat } from '@grafana/grafana-foundation-sdk/prometheus';
import * as stat from '@grafana/grafana-foundation-sdk/stat';
import * as table from '@grafana/grafana-foundation-sdk/table';
import * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import { datasource, flagMappings, Ids, instant, lastValue, legend, phaseColors, phaseMappings, phaseTimeline, progressGauge, query, statPanel, thresholds } from './panels.js';

/** The dashboard's uid (stable: links and provisioning refer to it). */
export const groupDashboardUid = 'modelwatch-group';

/** The group's own series (recorded by modelwatch-groups). */
const g = 'group=~"$group"';
/** One node inside a repeated row. */
const node = 'group=~"$group", target=~"$node"';

/** A node's stall and wait in one value: moving, stalled (its own), or waiting on another node. */
function holdMappings(): ValueMapping[] {
  return [{
    type: MappingType.ValueToText,
    options: {
      '0': { text: 'moving', color: 'green', index: 0 },
      '1': { text: 'STALLED', color: 'red', index: 1 },
      '2': { text: 'waiting on another node', color: 'blue', index: 2 },
      '3': { text: 'waiting on another node', color: 'blue', index: 3 },
    },
  }];
}

/** The group dashboard as Grafana JSON. */
export function groupDashboard(): Dashboard {
  const ids = new Ids();
  const builder = new DashboardBuilder('modelwatch: multi-node groups')
    .uid(groupDashboardUid)
    .description('Loads that span nodes: the group as one (least advanced phase, slowest progress, readiness, the node it waits on) and a row per node.')
    .tags(['modelwatch', 'llm', 'inference', 'multi-node'])
    .refresh('10s')
    .time({ from: 'now-3h', to: 'now' })
    .tooltip(DashboardCursorSync.Crosshair)
    .withVariable(new DatasourceVariableBuilder('datasource').label('Data source').type('prometheus'))
    .withVariable(new QueryVariableBuilder('group')
      .label('Group')
      .datasource(datasource)
      .query('label_values(modelwatch_group_member, group)')
      .definition('label_values(modelwatch_group_member, group)')
      .refresh(VariableRefresh.OnTimeRangeChanged)
      .sort(VariableSort.AlphabeticalAsc))
    .withVariable(new QueryVariableBuilder('node')
      .label('Node')
      .datasource(datasource)
      .query('label_values(modelwatch_group_member{group=~"$group"}, target)')
      .definition('label_values(modelwatch_group_member{group=~"$group"}, target)')
      .refresh(VariableRefresh.OnTimeRangeChanged)
      .sort(VariableSort.AlphabeticalAsc)
      .multi(true)
      .includeAll(true));

  builder.withPanel(statPanel(ids, 'Group phase', 'modelwatch:group_phase_code: the phase of the least advanced node (crashed when one crashed, down while a node it should have does not report).', `modelwatch:group_phase_code{${g}}`)
    .mappings(phaseMappings())
    .thresholds(thresholds([{ value: null, color: phaseColors.down }]))
    .span(5));

  builder.withPanel(progressGauge(ids, 'Group progress', 'modelwatch:group_progress_ratio: the progress of the slowest node (a node past loading counts 1).', instant('A', `modelwatch:group_progress_ratio{${g}}`, '{{group}}'), 'no group')
    .span(7)
    .height(4));

  builder.withPanel(statPanel(ids, 'Group ready', 'modelwatch:group_ready: 1 when every node has loaded and the head is verified by its canary.', `modelwatch:group_ready{${g}}`)
    .mappings(flagMappings(['not ready', 'orange'], ['ready', 'green']))
    .thresholds(thresholds([{ value: null, color: 'orange' }, { value: 1, color: 'green' }]))
    .span(4));

  builder.withPanel(new stat.PanelBuilder()
    .id(ids.panel())
    .title('Held back by')
    .description('modelwatch:group_holdback: the node the group waits on while it is not ready (its least advanced; never one that itself waits on another).')
    .datasource(datasource)
    .withTarget(instant('A', `modelwatch:group_holdback{${g}}`, '{{target}}'))
    .reduceOptions(lastValue())
    .graphMode(BigValueGraphMode.None)
    .textMode(BigValueTextMode.Name)
    .colorMode(BigValueColorMode.None)
    .noValue('nothing (ready)')
    .span(4)
    .height(4));

  builder.withPanel(statPanel(ids, 'Nodes reporting', 'modelwatch:group_nodes_seen: the nodes whose modelwatch reports, against modelwatch:group_nodes_expected (the group size the nodes know).', `modelwatch:group_nodes_seen{${g}}`)
    .colorMode(BigValueColorMode.None)
    .noValue('0')
    .span(4));

  builder.withPanel(phaseTimeline(ids, 'Phases: the group and its nodes', 'modelwatch:group_phase_code (the group) and modelwatch_phase_code of each node, one lane each.', [
    query('A', `modelwatch:group_phase_code{${g}}`, 'group {{group}}'),
    query('B', `modelwatch_phase_code{${g}}`, '{{target}} ({{instance}})'),
  ])
    .span(16)
    .height(6));

  builder.withPanel(new table.PanelBuilder()
    .id(ids.panel())
    .title('Group alerts')
    .description('The firing alerts of the group (ModelwatchGroupStalled names the node that holds it back, ModelwatchGroupNodeCrashed the node that crashed).')
    .datasource(datasource)
    .withTarget(instant('A', `ALERTS{alertstate="firing", alertname=~"ModelwatchGroup.*", ${g}}`).format(PromQueryFormat.Table))
    .withTransformation({
      id: 'organize',
      options: {
        excludeByName: { Time: true, __name__: true, job: true, alertstate: true, Value: true },
        indexByName: { alertname: 0, target: 1, instance: 2, severity: 3 },
      },
    })
    .span(8)
    .height(6));

  builder.withRow(new RowBuilder('$node').id(ids.panel()).repeat('node'));

  builder.withPanel(phaseTimeline(ids, 'Phase', 'modelwatch_phase_code of the node.', [
    query('A', `modelwatch_phase_code{${node}}`, '{{target}} ({{instance}})'),
  ])
    .span(24)
    .height(4));

  builder.withPanel(progressGauge(ids, 'Progress', "modelwatch_load_progress_ratio of the node: a worker's weights against its share of the checkpoint (bytes read, GPU memory), its counters, or its phases' past durations.", instant('A', `modelwatch_load_progress_ratio{${node}}`, '{{target}}'), 'not loading')
    .span(8)
    .height(6));

  builder.withPanel(statPanel(ids, 'Stalled or waiting', 'modelwatch_load_stalled (its own stall) and modelwatch_load_waiting (its silence is another node\'s): a waiting node is not the one to look at.', `modelwatch_load_stalled{${node}} + 2 * modelwatch_load_waiting{${node}}`)
    .mappings(holdMappings())
    .thresholds(thresholds([{ value: null, color: 'green' }, { value: 1, color: 'red' }, { value: 2, color: 'blue' }]))
    .span(4)
    .height(6));

  builder.withPanel(new timeseries.PanelBuilder()
    .id(ids.panel())
    .title('GPU memory')
    .description("Memory held by the node's processes on each GPU (modelwatch_target_gpu_memory_used_bytes), and each GPU of its host.")
    .datasource(datasource)
    .withTarget(query('A', `sum by (gpu) (modelwatch_target_gpu_memory_used_bytes{${node}})`, 'GPU {{gpu}} $node'))
    .withTarget(query('B', `modelwatch_gpu_memory_used_bytes * on (instance) group_left () max by (instance) (modelwatch_group_member{${node}})`, 'GPU {{gpu}} used'))
    .unit('bytes')
    .min(0)
    .fillOpacity(10)
    .legend(legend())
    .span(12)
    .height(6));

  builder.withPanel(new table.PanelBuilder()
    .id(ids.panel())
    .title('Last line')
    .description('The latest log line the node read (modelwatch_last_line_timestamp_seconds, its line label; updated at most every 10 s) and how long ago.')
    .datasource(datasource)
    .withTarget(instant('A', `modelwatch_last_line_timestamp_seconds{${node}} * 1000`).format(PromQueryFormat.Table))
    .withTransformation({
      id: 'organize',
      options: {
        excludeByName: { Time: true, __name__: true, job: true, group: true, instance: true },
        indexByName: { target: 0, Value: 1, line: 2 },
        renameByName: { Value: 'read' },
      },
    })
    .overrideByName('read', [{ id: 'unit', value: 'dateTimeFromNow' }])
    .span(24)
    .height(3));

  return builder.build();
}
