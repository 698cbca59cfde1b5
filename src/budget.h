/*
 * budget.h -- internal: a step's budget (budget.c), what an event loop's
 * step may do, shared by the HTTP layer's loop, the C loop and the binding.
 * Of the base layer: base.h includes it.
 */
#ifndef MAPI_BUDGET_H
#define MAPI_BUDGET_H

#include <stddef.h>

/* How much one step of a loop may do, by the rules of mapi_loop_step_budget
   (merchantapi.h): seconds of work, the transfers collected, calls reported.
   Its time is the wall clock (monotonic), not CPU time.  The one budget of a
   step: http_loop.c checks it for the HTTP layer's work, loop.c for the C
   loop's, lua_loop.c for the Lua tasks' resumes and pieces
   (lua/merchantapi/loop.lua keeps none). */
typedef struct mapi_budget {
    double max_seconds;   /* <= 0: no bound on time */
    size_t max_calls;     /* 0: no bound on collected, nor on reported */
    int wait;             /* 1: the step waits for ready work within max_seconds, and
                             its waits count (mapi_loop_step_within) */
    double spent;         /* seconds of work before `since` */
    double since;         /* monotonic seconds the current stretch of work began; < 0: waiting */
    size_t units;         /* pieces of work done: socket events, timer calls, collected, reported */
    size_t collected;     /* finished transfers handed to the done callback */
    size_t reported;      /* ended calls reported (loop.c) */
    int full;             /* 1: a piece did not fit (mapi_budget_take_cost): the step is over */
} mapi_budget;
/* A budget of max_seconds (<= 0: none) and max_calls (0: none), its work
   counted from now. */
void mapi_budget_start(mapi_budget *b, double max_seconds, size_t max_calls);
/* Whether one more piece of work may be done now; counter: &b->collected,
   &b->reported (checked against max_calls), or NULL.  1: done, counted; 0:
   to leave for the next step.  b NULL: always 1. */
int mapi_budget_take(mapi_budget *b, size_t *counter);
/* mapi_budget_take for a piece expected to last `cost` seconds (<= 0: not
   known): also 0 when it would end after max_seconds, unless less than a
   tenth of them is spent (a piece longer than the budget runs at the start
   of a step, never starved); once it refuses, the budget is full: every
   later take of the step is refused (the work that did not fit is not
   offered again in the same step, nor squeezed out by smaller pieces), and
   mapi_budget_left is 0. */
int mapi_budget_take_cost(mapi_budget *b, size_t *counter, double cost);
/* A wait begins (its time is not work, unless b->wait) / ends.  b NULL:
   nothing. */
void mapi_budget_pause(mapi_budget *b);
void mapi_budget_resume(mapi_budget *b);
/* Seconds of work so far (0 without max_seconds). */
double mapi_budget_spent(const mapi_budget *b);
/* Seconds the step may still wait for and work, in whole milliseconds
   rounded down (a wait never ends after the budget): 0 when the time is
   spent, or max_calls calls were reported; -1 without max_seconds. */
double mapi_budget_left(const mapi_budget *b);

#endif /* MAPI_BUDGET_H */
