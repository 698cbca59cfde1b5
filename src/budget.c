/*
 * budget.c -- how much one step of an event loop may do (mapi_budget, by
 * the rules of mapi_loop_step_budget in merchantapi.h): seconds of work on
 * the monotonic clock, waits not counted unless the step waits within its
 * time, pieces of work and the calls collected and reported.  One budget a
 * step, checked where the work is: the HTTP layer's loop (http_loop.c: its
 * socket events, timers and finished transfers), the C loop (loop.c: the
 * calls reported), the binding (lua_loop.c: the Lua tasks' resumes).
 */
#include <string.h>

#include "base.h"

void mapi_budget_start(mapi_budget *b, double max_seconds, size_t max_calls)
{
    memset(b, 0, sizeof *b);
    b->max_seconds = max_seconds > 0 ? max_seconds : 0;
    b->max_calls = max_calls;
    b->since = b->max_seconds > 0 ? mapi_monotonic_seconds() : 0;
}

double mapi_budget_spent(const mapi_budget *b)
{
    if (!b || b->max_seconds <= 0)
        return 0;
    return b->spent + (b->since >= 0 ? mapi_monotonic_seconds() - b->since : 0);
}

int mapi_budget_take(mapi_budget *b, size_t *counter)
{
    if (!b)
        return 1;
    if (b->units > 0) { /* the first piece of work of a step is always done */
        if (b->full)
            return 0;
        if (counter && b->max_calls > 0 && *counter >= b->max_calls)
            return 0;
        if (b->max_seconds > 0 && mapi_budget_spent(b) >= b->max_seconds)
            return 0;
    }
    b->units++;
    if (counter)
        (*counter)++;
    return 1;
}

int mapi_budget_take_cost(mapi_budget *b, size_t *counter, double cost)
{
    if (b && b->units > 0 && cost > 0 && b->max_seconds > 0) {
        double spent = mapi_budget_spent(b);
        /* what does not fit waits for the next step -- unless the step has
           barely begun: a piece longer than a budget still runs, early */
        if (spent + cost > b->max_seconds && spent >= b->max_seconds / 10) {
            b->full = 1;
            return 0;
        }
    }
    return mapi_budget_take(b, counter);
}

double mapi_budget_left(const mapi_budget *b)
{
    double left;

    if (!b || b->max_seconds <= 0)
        return -1.0;
    if ((b->max_calls > 0 && b->reported >= b->max_calls) || b->full)
        return 0;
    left = b->max_seconds - mapi_budget_spent(b);
    if (left <= 0)
        return 0;
    return (double)(long long)(left * 1000.0) / 1000.0; /* whole ms, rounded down */
}

void mapi_budget_pause(mapi_budget *b)
{
    if (b && b->max_seconds > 0 && !b->wait && b->since >= 0) {
        b->spent += mapi_monotonic_seconds() - b->since;
        b->since = -1;
    }
}

void mapi_budget_resume(mapi_budget *b)
{
    if (b && b->max_seconds > 0 && b->since < 0)
        b->since = mapi_monotonic_seconds();
}
