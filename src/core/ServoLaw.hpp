#pragma once
// The control law of both servos (objects: Motion::Kind::Servo; the periodic cell:
// StressControl): proportional, with an optional integral term.
#include <algorithm>
#include <cmath>

namespace dem {

// u = clamp(gain e + I, -limit, limit) for the error e; with an integral time T_i > 0,
// I += gain e dt / T_i (a PI controller in its standard form), but I grows only as far as u stays
// within its limit (conditional integration, against wind-up): an object approaching at full speed
// would otherwise overshoot its target by what I gathered on the way. That keeps |I| <= limit.
// A non-finite error leaves I as it is. With T_i = 0 the law is proportional and I stays 0.
inline double servoOutput(double error, double gain, double limit, double integralTime, double dt,
                          double& integral) {
    const double p = gain * error;
    if (integralTime <= 0)
        return std::clamp(p, -limit, limit);
    const double next = integral + p * dt / integralTime;
    if (!std::isfinite(next))
        return std::clamp(p + integral, -limit, limit);
    if (next > integral)
        integral = std::min(next, std::max(integral, limit - p));
    else
        integral = std::max(next, std::min(integral, -limit - p));
    return std::clamp(p + integral, -limit, limit);
}

} // namespace dem
