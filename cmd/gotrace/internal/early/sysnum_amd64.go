package early

const sysBPF = 321 // SYS_bpf (TestKernelNumbers)
