/**
 * The load-progress dashboard (dashboards/modelwatch-load.json), built with the Grafana Foundation
 * SDK. One repeated row per target: phase timeline, current state, GPU memory, log lines, crashes,
 * canary results and past load durations. `npm run dashboards` writes the JSON; a test keeps the
 * committed file equal to what this module generates, so never edit the JSON by hand.
 */
/* eslint-disable @typescript-eslint/no-deprecated --
 * The SDK marks the classic dashboard schema deprecated in favour of dashboardv2, which needs
 * Grafana 12's dynamic dashboards; the classic JSON imports into any current Grafana. */
import {
  AnnotationQueryBuilder,
  DashboardBuilder,
  DashboardCursorSync,
  DatasourceVariableBuilder,
  MappingType,
  QueryVariableBuilder,
  RowBuilder,
  VariableRefresh,
  VariableSort,
  type Dashboard,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { BarGaugeDisplayMode, BigValueColorMode, VizOrientation } from '@grafana/grafana-foundation-sdk/common';
import { PromQueryFormat } from '@grafana/grafana-foundation-sdk/prometheus';
import * as bargauge from '@grafana/grafana-foundation-sdk/bargauge';
import * as table from '@grafana/grafana-foundation-sdk/table';
import * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import { datasource, flagMappings, Ids, instant, lastValue, legend, phaseColors, phaseMappings, phaseTimeline, progressGauge, query, statPanel, thresholds } from './panels.js';

export { phaseColors, phaseMappings } from './panels.js';

/** The dashboard's uid (stable: links and provisioning refer to it). */
export const loadDashboardUid = 'modelwatch-load';

/** Label matchers of the per-target row (`$target` is one target inside a repeated row). */
const sel = 'instance=~"$instance", target=~"$target"';

/** The load-progress dashboard as Grafana JSON (schemaVersion of the SDK). */
export function loadDashboard(): Dashboard {
  const ids = new Ids();
  const builder = new DashboardBuilder('modelwatch: model loads')
    .uid(loadDashboardUid)
    .description('Model loads watched by modelwatch: phases, state, GPU memory, log lines, crashes, canaries and load durations per target.')
    .tags(['modelwatch', 'llm', 'inference'])
    .refresh('10s')
    .time({ from: 'now-3h', to: 'now' })
    .tooltip(DashboardCursorSync.Crosshair)
    .withVariable(new DatasourceVariableBuilder('datasource').label('Data source').type('prometheus'))
    .withVariable(new QueryVariableBuilder('instance')
      .label('Instance')
      .datasource(datasource)
      .query('label_values(modelwatch_phase_code, instance)')
      .definition('label_values(modelwatch_phase_code, instance)')
      .refresh(VariableRefresh.OnTimeRangeChanged)
      .sort(VariableSort.AlphabeticalAsc)
      .multi(true)
      .includeAll(true))
    .withVariable(new QueryVariableBuilder('target')
      .label('Target')
      .datasource(datasource)
      .query('label_values(modelwatch_phase_code{instance=~"$instance"}, target)')
      .definition('label_values(modelwatch_phase_code{instance=~"$instance"}, target)')
      .refresh(VariableRefresh.OnTimeRangeChanged)
      .sort(VariableSort.AlphabeticalAsc)
      .multi(true)
      .includeAll(true))
    .annotation(new AnnotationQueryBuilder()
      .name('Phase transitions')
      .datasource(datasource)
      .enable(true)
      .iconColor('purple')
      .expr(`changes(modelwatch_phase_code{${sel}}[1m]) > 0`)
      .target(query('Anno', `changes(modelwatch_phase_code{${sel}}[1m]) > 0`))
      .titleFormat('{{target}}: phase changed')
      .tagKeys('target,instance')
      .step('60s'));

  builder.withRow(new RowBuilder('$target').id(ids.panel()).repeat('target'));

  builder.withPanel(phaseTimeline(ids, 'Load phase', 'modelwatch_phase_code over time, one lane per target and instance.', [
    query('A', `modelwatch_phase_code{${sel}}`, '{{target}} ({{instance}})'),
  ])
    .span(24)
    .height(5));

  builder.withPanel(statPanel(ids, 'Current phase', 'modelwatch_phase_code now.', `modelwatch_phase_code{${sel}}`)
    .mappings(phaseMappings())
    .thresholds(thresholds([{ value: null, color: phaseColors.down }]))
    .span(5));

  builder.withPanel(statPanel(ids, 'Attempt elapsed', 'Time since the current load attempt started (time() - modelwatch_load_started_timestamp_seconds).', `time() - modelwatch_load_started_timestamp_seconds{${sel}}`)
    .unit('s')
    .colorMode(BigValueColorMode.None)
    .noValue('no attempt yet')
    .span(5));

  builder.withPanel(statPanel(ids, 'Stalled', 'modelwatch_load_stalled: 1 while a loading phase shows no progress beyond its stall budget.', `modelwatch_load_stalled{${sel}}`)
    .mappings(flagMappings(['no', 'green'], ['STALLED', 'red']))
    .thresholds(thresholds([{ value: null, color: 'green' }, { value: 1, color: 'red' }]))
    .span(4));

  builder.withPanel(statPanel(ids, 'Readiness gate', 'modelwatch_ready: 1 when the target is ready to serve.', `modelwatch_ready{${sel}}`)
    .mappings(flagMappings(['not ready', 'orange'], ['ready', 'green']))
    .thresholds(thresholds([{ value: null, color: 'orange' }, { value: 1, color: 'green' }]))
    .span(5));

  builder.withPanel(statPanel(ids, 'Health status', 'modelwatch_health_status_code: HTTP status of the last health check (0: refused or failed).', `modelwatch_health_status_code{${sel}}`)
    .mappings([{ type: MappingType.ValueToText, options: { '0': { text: 'no answer', color: 'red', index: 0 } } }])
    .thresholds(thresholds([
      { value: null, color: 'red' },
      { value: 200, color: 'green' },
      { value: 300, color: 'orange' },
      { value: 500, color: 'red' },
    ]))
    .span(5));

  builder.withPanel(progressGauge(ids, 'Progress', 'modelwatch_load_progress_ratio: progress of the load in progress, its phases weighted by their past durations (counters, GPU memory against past loads, or time). Absent when not loading.', instant('A', `modelwatch_load_progress_ratio{${sel}}`, '{{target}} ({{instance}})'), 'not loading')
    .span(12)
    .height(4));

  builder.withPanel(statPanel(ids, 'ETA', 'modelwatch_load_eta_seconds: expected time until ready, from past loads of the same fingerprint. Absent without history: never invented.', `modelwatch_load_eta_seconds{${sel}}`)
    .unit('s')
    .colorMode(BigValueColorMode.None)
    .noValue('no history yet')
    .span(4)
    .height(4));

  builder.withPanel(statPanel(ids, 'Slower than history', 'modelwatch_load_slow: 1 while the load runs longer than the configured multiple of the past 95th percentile (still moving, unlike a stall).', `modelwatch_load_slow{${sel}}`)
    .mappings(flagMappings(['no', 'green'], ['SLOW', 'orange']))
    .thresholds(thresholds([{ value: null, color: 'green' }, { value: 1, color: 'orange' }]))
    .span(4)
    .height(4));

  builder.withPanel(statPanel(ids, 'Timeout risk', 'max(modelwatch_config_risk): 1 when a deadline on the load (engine_ready_timeout, a configured startupProbe budget) is shorter than loads take; the kinds are in the risks of the status API.', `max by (target, instance) (modelwatch_config_risk{${sel}})`)
    .mappings(flagMappings(['none', 'green'], ['AT RISK', 'red']))
    .thresholds(thresholds([{ value: null, color: 'green' }, { value: 1, color: 'red' }]))
    .span(4)
    .height(4));

  builder.withPanel(new timeseries.PanelBuilder()
    .id(ids.panel())
    .title('GPU memory')
    .description('Memory used and total per GPU of the instance (nvidia-smi), and the part held by this target\'s processes.')
    .datasource(datasource)
    .withTarget(query('A', 'modelwatch_gpu_memory_used_bytes{instance=~"$instance"}', 'GPU {{gpu}} used'))
    .withTarget(query('B', 'modelwatch_gpu_memory_total_bytes{instance=~"$instance"}', 'GPU {{gpu}} total'))
    .withTarget(query('C', `sum by (gpu) (modelwatch_target_gpu_memory_used_bytes{${sel}})`, 'GPU {{gpu}} $target'))
    .unit('bytes')
    .min(0)
    .overrideByRegexp('.* total', [{ id: 'custom.lineStyle', value: { fill: 'dash', dash: [10, 10] } }, { id: 'custom.fillOpacity', value: 0 }])
    .fillOpacity(10)
    .legend(legend())
    .span(12)
    .height(8));

  builder.withPanel(new timeseries.PanelBuilder()
    .id(ids.panel())
    .title('Log lines per second by class')
    .description('rate(modelwatch_log_lines_total[1m]) by line class.')
    .datasource(datasource)
    .withTarget(query('A', `sum by (class) (rate(modelwatch_log_lines_total{${sel}}[1m]))`, '{{class}}'))
    .unit('short')
    .min(0)
    .legend(legend())
    .span(12)
    .height(8));

  builder.withPanel(new timeseries.PanelBuilder()
    .id(ids.panel())
    .title('Load duration: past loads against this attempt')
    .description('Median and p90 of finished load attempts by outcome (modelwatch_load_duration_seconds, since the daemon started), against the elapsed time of the attempt in progress.')
    .datasource(datasource)
    .withTarget(query('A', `histogram_quantile(0.5, sum by (le, outcome) (modelwatch_load_duration_seconds_bucket{${sel}}))`, 'p50 {{outcome}}'))
    .withTarget(query('B', `histogram_quantile(0.9, sum by (le, outcome) (modelwatch_load_duration_seconds_bucket{${sel}}))`, 'p90 {{outcome}}'))
    .withTarget(query('C', `(time() - modelwatch_load_started_timestamp_seconds{${sel}}) and on (instance, target) (modelwatch_phase_code{${sel}} > 0 < 5)`, 'current attempt ({{instance}})'))
    .unit('s')
    .min(0)
    .overrideByRegexp('current attempt.*', [{ id: 'custom.lineWidth', value: 3 }, { id: 'color', value: { mode: 'fixed', fixedColor: 'purple' } }])
    .legend(legend())
    .span(12)
    .height(8));

  builder.withPanel(new bargauge.PanelBuilder()
    .id(ids.panel())
    .title('Crashes by reason')
    .description('increase(modelwatch_crashes_total[$__range]): crashed attempts in the time range, by root-cause reason.')
    .datasource(datasource)
    .withTarget(instant('A', `sum by (reason) (increase(modelwatch_crashes_total{${sel}}[$__range]))`, '{{reason}}'))
    .reduceOptions(lastValue())
    .orientation(VizOrientation.Horizontal)
    .displayMode(BarGaugeDisplayMode.Basic)
    .unit('short')
    .decimals(0)
    .min(0)
    .thresholds(thresholds([{ value: null, color: 'green' }, { value: 1, color: 'red' }]))
    .span(12)
    .height(8));

  builder.withPanel(new table.PanelBuilder()
    .id(ids.panel())
    .title('Canary results')
    .description('Last run of each canary probe: success, time to first token, output tokens per second.')
    .datasource(datasource)
    .withTarget(instant('A', `modelwatch_smoke_success{${sel}}`).format(PromQueryFormat.Table))
    .withTarget(instant('B', `modelwatch_smoke_ttft_seconds{${sel}}`).format(PromQueryFormat.Table))
    .withTarget(instant('C', `modelwatch_smoke_output_tokens_per_second{${sel}}`).format(PromQueryFormat.Table))
    .withTransformation({ id: 'merge', options: {} })
    .withTransformation({
      id: 'organize',
      options: {
        excludeByName: { Time: true, __name__: true, job: true },
        indexByName: { probe: 0, 'Value #A': 1, 'Value #B': 2, 'Value #C': 3 },
        renameByName: { 'Value #A': 'passed', 'Value #B': 'TTFT', 'Value #C': 'output tokens/s' },
      },
    })
    .overrideByName('passed', [
      { id: 'mappings', value: flagMappings(['fail', 'red'], ['pass', 'green']) },
      { id: 'custom.cellOptions', value: { type: 'color-background' } },
    ])
    .overrideByName('TTFT', [{ id: 'unit', value: 's' }])
    .overrideByName('output tokens/s', [{ id: 'unit', value: 'short' }, { id: 'decimals', value: 1 }])
    .span(16)
    .height(8));

  return builder.build();
}
