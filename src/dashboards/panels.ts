/**
 * What the generated dashboards share: the data source variable, phase colours and mappings, and
 * the builders of queries and panels (src/dashboards/load.ts, src/dashboards/group.ts).
 */
import {
  FieldColorBuilder,
  FieldColorModeId,
  MappingType,
  ThresholdsConfigBuilder,
  ThresholdsMode,
  type Threshold,
  type ValueMapping,
} from '@grafana/grafana-foundation-sdk/dashboard';
import {
  BarGaugeDisplayMode,
  BigValueColorMode,
  BigValueGraphMode,
  LegendDisplayMode,
  LegendPlacement,
  ReduceDataOptionsBuilder,
  VisibilityMode,
  VizLegendOptionsBuilder,
  VizOrientation,
} from '@grafana/grafana-foundation-sdk/common';
import { DataqueryBuilder } from '@grafana/grafana-foundation-sdk/prometheus';
import * as bargauge from '@grafana/grafana-foundation-sdk/bargauge';
import * as stat from '@grafana/grafana-foundation-sdk/stat';
import * as statetimeline from '@grafana/grafana-foundation-sdk/statetimeline';
import { phaseCode, phases, type Phase } from '../types.js';

/** The Prometheus data source picked by the `datasource` variable. */
export const datasource = { type: 'prometheus', uid: '${datasource}' };

/** The colour of each phase in the timeline and the current-phase stat. */
export const phaseColors: Readonly<Record<Phase, string>> = {
  down: '#8e8e8e',
  starting: 'blue',
  loading_weights: 'purple',
  compiling: 'orange',
  warming_up: 'yellow',
  ready: 'green',
  crashed: 'red',
};

/** Value mappings from `modelwatch_phase_code` to phase names and colours. */
export function phaseMappings(): ValueMapping[] {
  const options: Record<string, { text: string; color: string; index: number }> = {};
  phases.forEach((phase, index) => {
    options[String(phaseCode[phase])] = { text: phase, color: phaseColors[phase], index };
  });
  return [{ type: MappingType.ValueToText, options }];
}

/** A 0/1 flag shown as two words and two colours. */
export function flagMappings(zero: [string, string], one: [string, string]): ValueMapping[] {
  return [{
    type: MappingType.ValueToText,
    options: {
      '0': { text: zero[0], color: zero[1], index: 0 },
      '1': { text: one[0], color: one[1], index: 1 },
    },
  }];
}

/** Absolute thresholds of a panel. */
export function thresholds(steps: Threshold[]): ThresholdsConfigBuilder {
  return new ThresholdsConfigBuilder().mode(ThresholdsMode.Absolute).steps(steps);
}

/** Hands out panel ids and refIds in order, so the output is deterministic. */
export class Ids {
  private next = 1;
  /** The next panel id. */
  panel(): number {
    return this.next++;
  }
}

/** A Prometheus query with its refId. */
export function query(refId: string, expr: string, legend?: string): DataqueryBuilder {
  const q = new DataqueryBuilder().refId(refId).expr(expr).datasource(datasource);
  return legend === undefined ? q : q.legendFormat(legend);
}

/** An instant query (stats, tables, bar gauges). */
export function instant(refId: string, expr: string, legend?: string): DataqueryBuilder {
  return query(refId, expr, legend).instant();
}

/** A legend listed below the panel. */
export function legend(): VizLegendOptionsBuilder {
  return new VizLegendOptionsBuilder().showLegend(true).displayMode(LegendDisplayMode.List).placement(LegendPlacement.Bottom);
}

/** A panel's value: the last non-null one. */
export function lastValue(): ReduceDataOptionsBuilder {
  return new ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false);
}

/** A stat panel of one instant query, its background coloured by its value. */
export function statPanel(ids: Ids, title: string, description: string, expr: string): stat.PanelBuilder {
  return new stat.PanelBuilder()
    .id(ids.panel())
    .title(title)
    .description(description)
    .datasource(datasource)
    .withTarget(instant('A', expr))
    .reduceOptions(lastValue())
    .graphMode(BigValueGraphMode.None)
    .colorMode(BigValueColorMode.Background)
    .height(4);
}


/** A state timeline of phase codes, one lane per query's series, coloured by phase. */
export function phaseTimeline(ids: Ids, title: string, description: string, targets: readonly DataqueryBuilder[]): statetimeline.PanelBuilder {
  const panel = new statetimeline.PanelBuilder()
    .id(ids.panel())
    .title(title)
    .description(description)
    .datasource(datasource);
  for (const t of targets) panel.withTarget(t);
  return panel
    .mappings(phaseMappings())
    .thresholds(thresholds([{ value: null, color: phaseColors.down }]))
    .colorScheme(new FieldColorBuilder().mode(FieldColorModeId.Thresholds))
    .showValue(VisibilityMode.Auto)
    .mergeValues(true)
    .fillOpacity(80)
    .legend(legend());
}

/** A horizontal bar from 0 to 100% of one instant query (load progress), blue until it is full. */
export function progressGauge(ids: Ids, title: string, description: string, target: DataqueryBuilder, noValue: string): bargauge.PanelBuilder {
  return new bargauge.PanelBuilder()
    .id(ids.panel())
    .title(title)
    .description(description)
    .datasource(datasource)
    .withTarget(target)
    .reduceOptions(lastValue())
    .orientation(VizOrientation.Horizontal)
    .displayMode(BarGaugeDisplayMode.Gradient)
    .unit('percentunit')
    .min(0)
    .max(1)
    .noValue(noValue)
    .thresholds(thresholds([{ value: null, color: 'blue' }, { value: 1, color: 'green' }]));
}
