import createScatterplot from 'regl-scatterplot';
globalThis.createScatterplot = createScatterplot;
