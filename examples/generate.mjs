// Generate text from a weight set.   node examples/generate.mjs WEIGHTS_DIR "Once upon a time"
import { loadModel } from 'mlpscope';

const [dir, prompt = 'Once upon a time'] = process.argv.slice(2);
if (!dir) { console.error('usage: node examples/generate.mjs WEIGHTS_DIR [PROMPT]'); process.exit(2); }
const model = await loadModel(dir);
process.stdout.write(prompt);
for await (const t of model.generate(prompt, { maxTokens: 60, temperature: 0.8, topP: 0.95, seed: 1 })) process.stdout.write(t.text);
process.stdout.write('\n');
model.dispose();
