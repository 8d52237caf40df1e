// Where the demo model lives: the package ships weights/demo/ (the project's trained 2.88M-parameter
// model in Chinese and English, q8, 3.2 MB), so `loadModel(demoModelUrl)` works after `npm install`
// with nothing to fetch.
// In Node this is a file: URL; in a browser it is wherever the package's files are served.
/** @type {URL} */
export const demoModelUrl = new URL('../weights/demo/', import.meta.url);
