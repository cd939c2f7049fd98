#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <stdint.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static double DUR=60, WIN=0.1; static double T0; static int NT;
static double res[2][100000]; static int nw[2];
static void* run(void*arg){
  int id=(int)(intptr_t)arg; cpu_set_t s; CPU_ZERO(&s); CPU_SET(id,&s); pthread_setaffinity_np(pthread_self(),sizeof s,&s);
#ifdef INC
  /* the `inc` loop: ns per call (10 passes over 4,096 ints) */
  uint64_t x=id+1; int *a=calloc(4096,sizeof(int)); double w=now(); long n=0;
  while(1){ for(int r=0;r<10;r++){ for(int i=0;i<4096;i++) a[i]++; __asm__ volatile("" ::: "memory");} x+=a[5]; n++;
    double t=now(); if(t-w>=WIN){ res[id][nw[id]++]=(t-w)*1e9/n; n=0; w=t; if(t-T0>DUR) break;}}
#else
  /* a dependent chain of multiplies: ns per step */
  uint64_t x=id+1; double w=now(); long n=0;
  while(1){ for(int i=0;i<10000;i++){ x=x*6364136223846793005ULL+1442695040888963407ULL; x^=x>>17;} n++;
    double t=now(); if(t-w>=WIN){ res[id][nw[id]++]=(t-w)*1e9/n/10000; n=0; w=t; if(t-T0>DUR) break;}}
#endif
  if(x==42) printf("!");
  return 0;}
int main(int c,char**v){NT=atoi(v[1]); DUR=atof(v[2]); T0=now(); pthread_t th[2]; for(int i=0;i<NT;i++)pthread_create(&th[i],0,run,(void*)(intptr_t)i); for(int i=0;i<NT;i++)pthread_join(th[i],0);
 int m=nw[0]; for(int i=1;i<NT;i++) if(nw[i]<m)m=nw[i];
 for(int k=0;k<m;k++){ for(int i=0;i<NT;i++) printf("%.3f ",res[i][k]); printf("\n");}}
