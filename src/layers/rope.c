#include "layers.h"

/* Rotary position embedding. Frequency i (0 <= i < rotary_dim/2) turns by pos * theta^(-2i/rotary_dim).
 *  pairs  (llama2.c): rotates (x[2i], x[2i+1])
 *  halves (Hugging Face rotate_half): rotates (x[i], x[i + rotary_dim/2])
 * Head h starts at x + h*head_stride. pos is a double for linear RoPE scaling (pos / factor). Angles are computed in double so long contexts keep their precision. */
void ms_rope(float *x, int n_heads, int head_stride, int rotary_dim, double pos, double theta, int layout) {
    int half = rotary_dim / 2;
    for (int i = 0; i < half; i++) {
        double ang = pos * pow(theta, -2.0 * i / rotary_dim);
        float c = (float)cos(ang), s = (float)sin(ang);
        for (int h = 0; h < n_heads; h++) {
            float *v = x + (size_t)h * head_stride;
            int a = layout == MS_ROPE_PAIRS ? 2 * i : i, b = layout == MS_ROPE_PAIRS ? 2 * i + 1 : i + half;
            float va = v[a], vb = v[b];
            v[a] = va * c - vb * s;
            v[b] = vb * c + va * s;
        }
    }
}
