//go:build !purego

#include "textflag.h"

// func axpyFMA(a float64, x, y []float64)
// y[i] += a * x[i] for i < len(x); the caller checks len(y) >= len(x).
TEXT ·axpyFMA(SB), NOSPLIT, $0-56
	MOVQ         x_base+8(FP), SI
	MOVQ         x_len+16(FP), CX
	MOVQ         y_base+32(FP), DI
	VBROADCASTSD a+0(FP), Y0
	XORQ         AX, AX

axpy16:
	CMPQ        CX, $16
	JL          axpy4
	VMOVUPD     (SI)(AX*8), Y1
	VMOVUPD     32(SI)(AX*8), Y2
	VMOVUPD     64(SI)(AX*8), Y3
	VMOVUPD     96(SI)(AX*8), Y4
	VFMADD213PD (DI)(AX*8), Y0, Y1
	VFMADD213PD 32(DI)(AX*8), Y0, Y2
	VFMADD213PD 64(DI)(AX*8), Y0, Y3
	VFMADD213PD 96(DI)(AX*8), Y0, Y4
	VMOVUPD     Y1, (DI)(AX*8)
	VMOVUPD     Y2, 32(DI)(AX*8)
	VMOVUPD     Y3, 64(DI)(AX*8)
	VMOVUPD     Y4, 96(DI)(AX*8)
	ADDQ        $16, AX
	SUBQ        $16, CX
	JMP         axpy16

axpy4:
	CMPQ        CX, $4
	JL          axpy1
	VMOVUPD     (SI)(AX*8), Y1
	VFMADD213PD (DI)(AX*8), Y0, Y1
	VMOVUPD     Y1, (DI)(AX*8)
	ADDQ        $4, AX
	SUBQ        $4, CX
	JMP         axpy4

axpy1:
	TESTQ       CX, CX
	JE          axpyDone
	VMOVSD      (SI)(AX*8), X1
	VFMADD213SD (DI)(AX*8), X0, X1
	VMOVSD      X1, (DI)(AX*8)
	INCQ        AX
	DECQ        CX
	JMP         axpy1

axpyDone:
	VZEROUPPER
	RET

// func dotFMA(x, y []float64) float64
// sum x[i] y[i] for i < len(x); the caller checks len(y) == len(x).
TEXT ·dotFMA(SB), NOSPLIT, $0-56
	MOVQ   x_base+0(FP), SI
	MOVQ   x_len+8(FP), CX
	MOVQ   y_base+24(FP), DI
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ   AX, AX

dot16:
	CMPQ        CX, $16
	JL          dot4
	VMOVUPD     (SI)(AX*8), Y4
	VMOVUPD     32(SI)(AX*8), Y5
	VMOVUPD     64(SI)(AX*8), Y6
	VMOVUPD     96(SI)(AX*8), Y7
	VFMADD231PD (DI)(AX*8), Y4, Y0
	VFMADD231PD 32(DI)(AX*8), Y5, Y1
	VFMADD231PD 64(DI)(AX*8), Y6, Y2
	VFMADD231PD 96(DI)(AX*8), Y7, Y3
	ADDQ        $16, AX
	SUBQ        $16, CX
	JMP         dot16

dot4:
	CMPQ        CX, $4
	JL          dotReduce
	VMOVUPD     (SI)(AX*8), Y4
	VFMADD231PD (DI)(AX*8), Y4, Y0
	ADDQ        $4, AX
	SUBQ        $4, CX
	JMP         dot4

dotReduce:
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VHADDPD      X0, X0, X0

dot1:
	TESTQ       CX, CX
	JE          dotDone
	VMOVSD      (SI)(AX*8), X4
	VFMADD231SD (DI)(AX*8), X4, X0
	INCQ        AX
	DECQ        CX
	JMP         dot1

dotDone:
	VZEROUPPER
	MOVSD X0, ret+48(FP)
	RET

// func rank2DotAxpyFMA(x, u, w, v, y []float64, a, b, c float64) float64
// x -= a u + b w; y += c x; returns x . v; the caller checks the lengths.
TEXT ·rank2DotAxpyFMA(SB), NOSPLIT, $0-152
	MOVQ         x_base+0(FP), DI
	MOVQ         x_len+8(FP), CX
	MOVQ         u_base+24(FP), R8
	MOVQ         w_base+48(FP), R9
	MOVQ         v_base+72(FP), R10
	MOVQ         y_base+96(FP), R11
	VBROADCASTSD a+120(FP), Y0
	VBROADCASTSD b+128(FP), Y1
	VBROADCASTSD c+136(FP), Y2
	VXORPD       Y3, Y3, Y3
	VXORPD       Y4, Y4, Y4
	XORQ         AX, AX

r2d8:
	CMPQ         CX, $8
	JL           r2d4
	VMOVUPD      (DI)(AX*8), Y5
	VMOVUPD      32(DI)(AX*8), Y6
	VFNMADD231PD (R8)(AX*8), Y0, Y5
	VFNMADD231PD 32(R8)(AX*8), Y0, Y6
	VFNMADD231PD (R9)(AX*8), Y1, Y5
	VFNMADD231PD 32(R9)(AX*8), Y1, Y6
	VMOVUPD      Y5, (DI)(AX*8)
	VMOVUPD      Y6, 32(DI)(AX*8)
	VFMADD231PD  (R10)(AX*8), Y5, Y3
	VFMADD231PD  32(R10)(AX*8), Y6, Y4
	VMOVUPD      (R11)(AX*8), Y7
	VMOVUPD      32(R11)(AX*8), Y8
	VFMADD231PD  Y5, Y2, Y7
	VFMADD231PD  Y6, Y2, Y8
	VMOVUPD      Y7, (R11)(AX*8)
	VMOVUPD      Y8, 32(R11)(AX*8)
	ADDQ         $8, AX
	SUBQ         $8, CX
	JMP          r2d8

r2d4:
	CMPQ         CX, $4
	JL           r2dReduce
	VMOVUPD      (DI)(AX*8), Y5
	VFNMADD231PD (R8)(AX*8), Y0, Y5
	VFNMADD231PD (R9)(AX*8), Y1, Y5
	VMOVUPD      Y5, (DI)(AX*8)
	VFMADD231PD  (R10)(AX*8), Y5, Y3
	VMOVUPD      (R11)(AX*8), Y7
	VFMADD231PD  Y5, Y2, Y7
	VMOVUPD      Y7, (R11)(AX*8)
	ADDQ         $4, AX
	SUBQ         $4, CX

r2dReduce:
	VADDPD       Y4, Y3, Y3
	VEXTRACTF128 $1, Y3, X4
	VADDPD       X4, X3, X3
	VHADDPD      X3, X3, X3

r2d1:
	TESTQ        CX, CX
	JE           r2dDone
	VMOVSD       (DI)(AX*8), X5
	VFNMADD231SD (R8)(AX*8), X0, X5
	VFNMADD231SD (R9)(AX*8), X1, X5
	VMOVSD       X5, (DI)(AX*8)
	VFMADD231SD  (R10)(AX*8), X5, X3
	VMOVSD       (R11)(AX*8), X7
	VFMADD231SD  X5, X2, X7
	VMOVSD       X7, (R11)(AX*8)
	INCQ         AX
	DECQ         CX
	JMP          r2d1

r2dDone:
	VZEROUPPER
	MOVSD X3, ret+144(FP)
	RET

// func reflect4FMA(tau float64, v, z0, z1, z2, z3 []float64)
// z_k -= tau (v . z_k) v for k < 4, one pass for the four dot products and
// one for the four updates, each load of v shared by the four rows; the
// caller checks that every z_k is as long as v.
TEXT ·reflect4FMA(SB), NOSPLIT, $0-128
	MOVQ   v_base+8(FP), SI
	MOVQ   v_len+16(FP), CX
	MOVQ   z0_base+32(FP), DI
	MOVQ   z1_base+56(FP), R8
	MOVQ   z2_base+80(FP), R9
	MOVQ   z3_base+104(FP), R10
	MOVQ   CX, BX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	XORQ   AX, AX

rfd8:
	CMPQ        CX, $8
	JL          rfd4
	VMOVUPD     (SI)(AX*8), Y8
	VMOVUPD     32(SI)(AX*8), Y9
	VFMADD231PD (DI)(AX*8), Y8, Y0
	VFMADD231PD 32(DI)(AX*8), Y9, Y4
	VFMADD231PD (R8)(AX*8), Y8, Y1
	VFMADD231PD 32(R8)(AX*8), Y9, Y5
	VFMADD231PD (R9)(AX*8), Y8, Y2
	VFMADD231PD 32(R9)(AX*8), Y9, Y6
	VFMADD231PD (R10)(AX*8), Y8, Y3
	VFMADD231PD 32(R10)(AX*8), Y9, Y7
	ADDQ        $8, AX
	SUBQ        $8, CX
	JMP         rfd8

rfd4:
	CMPQ        CX, $4
	JL          rfdReduce
	VMOVUPD     (SI)(AX*8), Y8
	VFMADD231PD (DI)(AX*8), Y8, Y0
	VFMADD231PD (R8)(AX*8), Y8, Y1
	VFMADD231PD (R9)(AX*8), Y8, Y2
	VFMADD231PD (R10)(AX*8), Y8, Y3
	ADDQ        $4, AX
	SUBQ        $4, CX

rfdReduce:
	VADDPD       Y4, Y0, Y0
	VADDPD       Y5, Y1, Y1
	VADDPD       Y6, Y2, Y2
	VADDPD       Y7, Y3, Y3
	VEXTRACTF128 $1, Y0, X8
	VADDPD       X8, X0, X0
	VHADDPD      X0, X0, X0
	VEXTRACTF128 $1, Y1, X8
	VADDPD       X8, X1, X1
	VHADDPD      X1, X1, X1
	VEXTRACTF128 $1, Y2, X8
	VADDPD       X8, X2, X2
	VHADDPD      X2, X2, X2
	VEXTRACTF128 $1, Y3, X8
	VADDPD       X8, X3, X3
	VHADDPD      X3, X3, X3

rfd1:
	TESTQ       CX, CX
	JE          rfScale
	VMOVSD      (SI)(AX*8), X8
	VFMADD231SD (DI)(AX*8), X8, X0
	VFMADD231SD (R8)(AX*8), X8, X1
	VFMADD231SD (R9)(AX*8), X8, X2
	VFMADD231SD (R10)(AX*8), X8, X3
	INCQ        AX
	DECQ        CX
	JMP         rfd1

rfScale:
	// a_k = -tau (v . z_k), broadcast to four lanes.
	VMOVSD       tau+0(FP), X8
	VXORPD       X9, X9, X9
	VSUBSD       X8, X9, X8
	VMULSD       X8, X0, X0
	VMULSD       X8, X1, X1
	VMULSD       X8, X2, X2
	VMULSD       X8, X3, X3
	VBROADCASTSD X0, Y0
	VBROADCASTSD X1, Y1
	VBROADCASTSD X2, Y2
	VBROADCASTSD X3, Y3
	MOVQ         BX, CX
	XORQ         AX, AX

rfa4:
	CMPQ        CX, $4
	JL          rfa1
	VMOVUPD     (SI)(AX*8), Y8
	VMOVUPD     (DI)(AX*8), Y4
	VMOVUPD     (R8)(AX*8), Y5
	VMOVUPD     (R9)(AX*8), Y6
	VMOVUPD     (R10)(AX*8), Y7
	VFMADD231PD Y8, Y0, Y4
	VFMADD231PD Y8, Y1, Y5
	VFMADD231PD Y8, Y2, Y6
	VFMADD231PD Y8, Y3, Y7
	VMOVUPD     Y4, (DI)(AX*8)
	VMOVUPD     Y5, (R8)(AX*8)
	VMOVUPD     Y6, (R9)(AX*8)
	VMOVUPD     Y7, (R10)(AX*8)
	ADDQ        $4, AX
	SUBQ        $4, CX
	JMP         rfa4

rfa1:
	TESTQ       CX, CX
	JE          rfDone
	VMOVSD      (SI)(AX*8), X8
	VMOVSD      (DI)(AX*8), X4
	VMOVSD      (R8)(AX*8), X5
	VMOVSD      (R9)(AX*8), X6
	VMOVSD      (R10)(AX*8), X7
	VFMADD231SD X8, X0, X4
	VFMADD231SD X8, X1, X5
	VFMADD231SD X8, X2, X6
	VFMADD231SD X8, X3, X7
	VMOVSD      X4, (DI)(AX*8)
	VMOVSD      X5, (R8)(AX*8)
	VMOVSD      X6, (R9)(AX*8)
	VMOVSD      X7, (R10)(AX*8)
	INCQ        AX
	DECQ        CX
	JMP         rfa1

rfDone:
	VZEROUPPER
	RET

// R22QUAD updates four entries of both rows at byte offset off, their dot
// products summed into acc1 and acc2.
#define R22QUAD(off, acc1, acc2) \
	VMOVUPD      off(R8)(AX*8), Y7; \
	VMOVUPD      off(R9)(AX*8), Y8; \
	VMOVUPD      off(R10)(AX*8), Y9; \
	VMOVUPD      off(DI)(AX*8), Y13; \
	VMOVUPD      off(DX)(AX*8), Y14; \
	VFNMADD231PD Y7, Y0, Y13; \
	VFNMADD231PD Y8, Y1, Y13; \
	VFNMADD231PD Y7, Y10, Y14; \
	VFNMADD231PD Y8, Y11, Y14; \
	VMOVUPD      Y13, off(DI)(AX*8); \
	VMOVUPD      Y14, off(DX)(AX*8); \
	VFMADD231PD  Y9, Y13, acc1; \
	VFMADD231PD  Y9, Y14, acc2; \
	VMOVUPD      off(R11)(AX*8), Y15; \
	VFMADD231PD  Y13, Y2, Y15; \
	VFMADD231PD  Y14, Y12, Y15; \
	VMOVUPD      Y15, off(R11)(AX*8);

// func rank2x2DotAxpyFMA(x1, x2, u, w, v, y []float64, a1, b1, c1, a2, b2, c2 float64) (d1, d2 float64)
// rank2DotAxpyFMA for two rows x1 and x2 of one length sharing u, w, v and
// y: x_k -= a_k u + b_k w; y += c1 x1, then y += c2 x2; returns x1 . v and
// x2 . v (each summed as rank2DotAxpyFMA sums it). The caller checks the
// lengths.
TEXT ·rank2x2DotAxpyFMA(SB), NOSPLIT, $0-208
	MOVQ         x1_base+0(FP), DI
	MOVQ         x1_len+8(FP), CX
	MOVQ         x2_base+24(FP), DX
	MOVQ         u_base+48(FP), R8
	MOVQ         w_base+72(FP), R9
	MOVQ         v_base+96(FP), R10
	MOVQ         y_base+120(FP), R11
	VBROADCASTSD a1+144(FP), Y0
	VBROADCASTSD b1+152(FP), Y1
	VBROADCASTSD c1+160(FP), Y2
	VBROADCASTSD a2+168(FP), Y10
	VBROADCASTSD b2+176(FP), Y11
	VBROADCASTSD c2+184(FP), Y12
	VXORPD       Y3, Y3, Y3
	VXORPD       Y4, Y4, Y4
	VXORPD       Y5, Y5, Y5
	VXORPD       Y6, Y6, Y6
	XORQ         AX, AX

r22d8:
	CMPQ CX, $8
	JL   r22d4
	R22QUAD(0, Y3, Y5)
	R22QUAD(32, Y4, Y6)
	ADDQ $8, AX
	SUBQ $8, CX
	JMP  r22d8

r22d4:
	CMPQ CX, $4
	JL   r22Reduce
	R22QUAD(0, Y3, Y5)
	ADDQ $4, AX
	SUBQ $4, CX

r22Reduce:
	VADDPD       Y4, Y3, Y3
	VEXTRACTF128 $1, Y3, X4
	VADDPD       X4, X3, X3
	VHADDPD      X3, X3, X3
	VADDPD       Y6, Y5, Y5
	VEXTRACTF128 $1, Y5, X6
	VADDPD       X6, X5, X5
	VHADDPD      X5, X5, X5

r22d1:
	TESTQ        CX, CX
	JE           r22Done
	VMOVSD       (R8)(AX*8), X7
	VMOVSD       (R9)(AX*8), X8
	VMOVSD       (R10)(AX*8), X9
	VMOVSD       (DI)(AX*8), X13
	VMOVSD       (DX)(AX*8), X14
	VFNMADD231SD X7, X0, X13
	VFNMADD231SD X8, X1, X13
	VFNMADD231SD X7, X10, X14
	VFNMADD231SD X8, X11, X14
	VMOVSD       X13, (DI)(AX*8)
	VMOVSD       X14, (DX)(AX*8)
	VFMADD231SD  X9, X13, X3
	VFMADD231SD  X9, X14, X5
	VMOVSD       (R11)(AX*8), X15
	VFMADD231SD  X13, X2, X15
	VFMADD231SD  X14, X12, X15
	VMOVSD       X15, (R11)(AX*8)
	INCQ         AX
	DECQ         CX
	JMP          r22d1

r22Done:
	VZEROUPPER
	MOVSD X3, d1+192(FP)
	MOVSD X5, d2+200(FP)
	RET
