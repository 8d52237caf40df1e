#include "layers.h"

void ms_linear(const ms_model *m, const ms_tensor *W, const float *X, int T, float *Y) {
    m->kern.matmul[W->dtype](W->data, (size_t)W->rows, (size_t)W->cols, X, T, Y);
}
