package app

import "github.com/labstack/echo/v4"

// RegisteredRoutes lists the routes echo serves, for the OpenAPI drift test
// (app_test cannot see the router).
func RegisteredRoutes(a *App) []*echo.Route { return a.front.echo.Routes() }
