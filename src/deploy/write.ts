/** Writes deploy/kubernetes/prometheusrule.yaml from the Prometheus rules file (`npm run k8s`). */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { prometheusRule, prometheusRuleFile, rulesFile } from './prometheus-rule.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
writeFileSync(`${root}${prometheusRuleFile}`, prometheusRule(readFileSync(`${root}${rulesFile}`, 'utf8')));
console.log(`wrote ${prometheusRuleFile} from ${rulesFile}`);
